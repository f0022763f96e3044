"""Browser fixtures: Debian's chromium driven by Playwright, against a real live server.

One browser and one server for the session; each test gets fresh browser contexts. The
server runs on SQLite and the test Redis with small quotas, so a few ledger rows reach
the interesting states. Without /usr/bin/chromium (or the playwright package) the
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
from playwright.sync_api import Browser, Page, sync_playwright
from sqlalchemy import create_engine
from sqlmodel import Session

from app.clock import period_of, utcnow
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn
from tests.fakes.smtp import FakeSmtp
from tests.mcp.conftest import Stack
from tests.support.live_server import TEST_RUN_PREFIX, LiveServer, service_env, start_live_server
from tests.support.mail_stack import start_mail_stack
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
    yield DashboardServer(server, database_url)
    server.stop()


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
    stack = start_mail_stack(env, logs)
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


def look(page: Page, shot: Shot, screen: str) -> None:
    assert_fits(page)
    shot(page, screen)
