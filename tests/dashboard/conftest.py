"""Browser fixtures: Debian's chromium driven by Playwright, against a real live server.

One browser and one server for the session; each test gets fresh browser contexts. The
server runs on SQLite and the test Redis with small quotas, so a few ledger rows reach
the interesting states. Without /usr/bin/chromium (or the playwright package) the
browser tests skip, unless REQUIRE_SERVICES=1, where that is a failure.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright
from sqlalchemy import create_engine
from sqlmodel import Session

from app.clock import period_of, utcnow
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn
from tests.support.live_server import LiveServer, service_env, start_live_server
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


def today_label(moment: datetime | None = None) -> str:
    return f"{(moment or utcnow()):%-d %b %Y}"
