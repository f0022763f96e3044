"""The api and the worker say at start-up where mail goes: to the log without
GEOSVC_SMTP_URL (and sign-ups are then verified at once), else the server (no password)."""

from __future__ import annotations

import time

from tests.mcp.conftest import Stack
from tests.support.celery_worker import CeleryWorker
from tests.support.live_server import LiveServer

NO_SMTP = "mail: no GEOSVC_SMTP_URL, so e-mails are written to the worker's log instead"


def log_with(read: object, text: str, deadline_s: float = 30.0) -> str:
    deadline = time.monotonic() + deadline_s
    while text not in (log := read()) and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)
    return str(log)


def test_without_smtp_both_say_mail_goes_to_the_log(
    live_server: LiveServer, celery_worker: CeleryWorker
) -> None:
    assert NO_SMTP in log_with(live_server.log, NO_SMTP)
    assert "sign-ups are verified at once" in live_server.log()
    assert NO_SMTP in log_with(celery_worker.log, NO_SMTP)


def test_with_smtp_both_name_the_server_and_not_its_password(mail_stack: Stack) -> None:
    line = "mail: sent through smtp://127.0.0.1:"
    assert line in log_with(mail_stack.server.log, line)
    assert line in log_with(mail_stack.worker.log, line)
