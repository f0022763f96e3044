"""Browser fixtures: Debian's chromium driven by Playwright, against a real live server.

One browser and one server for the session; each test gets fresh browser contexts (a
`page` at each of the two widths) and the helpers that sign up and create keys through
the forms. The server runs on SQLite and the test Redis with small quotas, so a few
ledger rows reach the interesting states; tests that make real tool calls ask for its
worker (`dashboard_worker`). Without /usr/bin/chromium (or the playwright package) the
browser tests skip, unless REQUIRE_SERVICES=1, where that is a failure.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from sqlalchemy import create_engine
from sqlmodel import Session

from app.kit.clock import period_of, utcnow
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn
from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack, start_stack
from tests.support.celery_worker import CeleryWorker, start_celery_worker
from tests.support.factories import PASSWORD, unique_email
from tests.support.live_server import TEST_RUN_PREFIX, LiveServer, service_env, start_live_server
from tests.support.services import REQUIRE_SERVICES

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FREE_QUOTA = 20
STANDARD_QUOTA = 5
MAIL_FREE_QUOTA = 5  # warning (and its e-mail) at 4 credits
# Screenshots of every page at both widths, for a person to look at (not committed).
SHOTS_DIR = os.environ.get("DASHBOARD_SHOTS")


def _unavailable(reason: str) -> None:
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (REQUIRE_SERVICES=1)")
    pytest.skip(reason)


# Module scope: Playwright's sync API keeps an event loop running in this thread until it
# stops, and the async tests of later modules need the thread without one.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing: `apt-get install chromium` (make test does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@dataclass
class DashboardServer:
    server: LiveServer
    database_url: str
    env: dict[str, str]

    @property
    def url(self) -> str:
        return self.server.url

    def record_usage(self, user_id: str, calls: Sequence[tuple[str | None, str]]) -> None:
        """Charged calls (key id, tool) into the ledger now, through the ledger's own insert."""
        now = utcnow()
        events = [
            UsageEventIn(
                call_id=f"call_{secrets.token_hex(12)}",
                user_id=user_id,
                key_id=key_id,
                tool=tool,
                period=period_of(now),
                created_at=now,
            )
            for key_id, tool in calls
        ]
        engine = create_engine(self.database_url)
        with Session(engine) as session:
            record_events(session, events)
            session.commit()
        engine.dispose()


@pytest.fixture(scope="session")
def dashboard_server(
    redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DashboardServer]:
    data_dir = tmp_path_factory.mktemp("dashboard")
    database_url = f"sqlite:///{data_dir / 'geosvc.db'}"
    env = service_env(
        database_url=database_url,
        redis_url=redis_url,
        data_dir=data_dir,
        GEOSVC_FREE_QUOTA=str(FREE_QUOTA),
        GEOSVC_STANDARD_QUOTA=str(STANDARD_QUOTA),
    )
    server = start_live_server(env, data_dir / "server.log")
    yield DashboardServer(server, database_url, env)
    server.stop()


@pytest.fixture(scope="session")
def dashboard_worker(
    dashboard_server: DashboardServer, geodata_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CeleryWorker]:
    """A real worker for the dashboard's server (its database, Redis and key prefix), with
    the geodata indices: tool calls made over /mcp get answers."""
    env = {**dashboard_server.env, "GEOSVC_DATA_DIR": str(geodata_dir)}
    log_path = tmp_path_factory.mktemp("dashboard-worker") / "worker.log"
    worker = start_celery_worker(env, log_path)
    yield worker
    worker.stop(wait=False)


@pytest.fixture(scope="session")
def mail_dashboard(
    redis_url: str,
    geodata_dir: Path,
    fake_smtp: FakeSmtp,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    """A server and a Celery worker that mail through the fake SMTP server (so sign-ups
    confirm their address), with MAIL_FREE_QUOTA credits for the alert e-mails."""
    logs = tmp_path_factory.mktemp("dashboard-mail")
    env = service_env(
        database_url=f"sqlite:///{logs / 'geosvc.db'}",
        redis_url=redis_url,
        data_dir=geodata_dir,
        **fake_smtp.env(),
        GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}dashboard-mail:",
        GEOSVC_FREE_QUOTA=str(MAIL_FREE_QUOTA),
    )
    stack = start_stack(env, logs)
    yield stack
    stack.server.stop()
    stack.worker.stop(wait=False)


def today_label(moment: datetime | None = None) -> str:
    return f"{(moment or utcnow()):%-d %b %Y}"


# --- Pages at both widths ------------------------------------------------------------

Shot = Callable[[Page, str], None]
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextmanager
def new_page(browser: Browser, base_url: str, viewport: str) -> Iterator[Page]:
    """A page in a fresh browser context (its own cookies) at the viewport's size."""
    width, height = VIEWPORTS[viewport]
    context = browser.new_context(
        base_url=base_url,
        viewport={"width": width, "height": height},
        permissions=["clipboard-read", "clipboard-write"],
    )
    context.set_default_timeout(10_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(browser: Browser, dashboard_server: DashboardServer, viewport: str) -> Iterator[Page]:
    with new_page(browser, dashboard_server.url, viewport) as opened:
        yield opened


@pytest.fixture
def shot(viewport: str) -> Shot:
    """shot(page, name): a full-page screenshot into $DASHBOARD_SHOTS when set."""

    def take(page: Page, name: str) -> None:
        if SHOTS_DIR:
            Path(SHOTS_DIR).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{SHOTS_DIR}/{viewport}-{name}.png", full_page=True)

    return take


def assert_fits(page: Page) -> None:
    """No sideways scrolling: the document is no wider than the window."""
    widths = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], f"{page.url} scrolls sideways: {widths}"


# Every word of every visible table cell, measured in the page: a word drawn on more than
# one line was broken mid-token; one reaching past the cell's content box overflows it.
# Words end at spaces and after a hyphen ("eu-west" may wrap as a dictionary would).
# A number with its unit (td.num) or a `.nowrap` cell is one unit: all on one line. And no
# table is wider than the box it sits in.
BROKEN_WORDS_JS = """() => {
  // Rects on one line overlap vertically (mixed type sizes have different tops).
  const lineCount = (rects) => {
    let count = 0, bottom = -Infinity;
    for (const r of [...rects].sort((a, b) => a.top - b.top)) {
      if (r.top >= bottom - 1) count += 1;
      bottom = Math.max(bottom, r.bottom);
    }
    return count;
  };
  const problems = [];
  for (const cell of document.querySelectorAll("td, th")) {
    const box = cell.getBoundingClientRect();
    if (box.width === 0) continue;  // not shown (the phone layout hides the header row)
    const style = getComputedStyle(cell);
    const left = box.left + parseFloat(style.paddingLeft) - 0.5;
    const right = box.right - parseFloat(style.paddingRight) + 0.5;
    const whole = cell.matches(".num, .nowrap");
    const cellRects = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[^\\s-]*-|[^\\s-]+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        if (!rects.length) continue;  // inside something closed (a key's edit form)
        cellRects.push(...rects);
        const lines = lineCount(rects);
        const drawn = range.getBoundingClientRect();
        const where = `<${cell.tagName.toLowerCase()}> "${cell.innerText.trim().slice(0, 60)}"`;
        if (lines > 1) {
          problems.push(`"${word[0]}" broken over ${lines} lines in ${where}`);
        } else if (drawn.left < left || drawn.right > right) {
          problems.push(
            `"${word[0]}" (${drawn.width.toFixed(1)} px) overflows ${where} ` +
            `(${(right - left - 1).toFixed(1)} px)`
          );
        }
      }
    }
    if (whole && lineCount(cellRects) > 1) problems.push(`"${cell.innerText.trim()}" wraps`);
  }
  for (const table of document.querySelectorAll("table")) {
    const outer = table.parentElement.getBoundingClientRect();
    const style = getComputedStyle(table.parentElement);
    const room = outer.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
    const right = table.getBoundingClientRect().right;
    if (right > room + 0.5) {
      problems.push(`a table reaches ${(right - room).toFixed(1)} px past its box`);
    }
  }
  return problems;
}"""


def assert_no_broken_words(page: Page) -> None:
    """No table cell breaks a word mid-token or lets one overflow it (issue 38, item 3)."""
    problems = page.evaluate(BROKEN_WORDS_JS)
    assert problems == [], f"{page.url} at {page.viewport_size}: {problems}"


def look(page: Page, shot: Shot, screen: str) -> None:
    assert_fits(page)
    assert_no_broken_words(page)
    shot(page, screen)


def sign_up(page: Page, shot: Shot, name: str) -> str:
    """Signs up through the form (after one rejected attempt); returns the user id."""
    email = unique_email()
    page.goto("/dashboard/signup")
    page.get_by_label("Name (optional)").fill(name)
    page.get_by_label("E-mail").fill("ada@example")
    page.get_by_label("Password (at least 8 characters)").fill("short")
    page.get_by_role("button", name="Sign up").click()
    # Per-field errors; what was typed is still there (not the password).
    expect(page.locator("#email-error")).to_contain_text("Enter a valid e-mail address")
    expect(page.locator("#password-error")).to_contain_text("at least 8 characters")
    expect(page.get_by_label("Name (optional)")).to_have_value(name)
    expect(page.get_by_label("E-mail")).to_have_value("ada@example")
    expect(page.get_by_label("Password (at least 8 characters)")).to_have_value("")
    look(page, shot, "signup-errors")

    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password (at least 8 characters)").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name=f"Hello, {name}")).to_be_visible()
    expect(page.get_by_test_id("used")).to_have_text("0")
    expect(page.get_by_test_id("usage-state")).to_have_text("OK")
    expect(page.get_by_text(f"of {FREE_QUOTA} credits")).to_be_visible()
    look(page, shot, "home")
    return str(page.request.get("/me").json()["userId"])


def create_key(page: Page, name: str, expires_on: str = "") -> str:
    """Creates a key through the form (expiring on `expires_on`, YYYY-MM-DD, if given);
    returns its plaintext."""
    page.goto("/dashboard/keys")
    page.get_by_label("Name", exact=True).fill(name)
    if expires_on:
        page.get_by_label("Expires on").fill(expires_on)
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("heading", name=f"Key “{name}” created")).to_be_visible()
    return page.locator("#plaintext").inner_text().strip()
