"""E-mail tasks (queue `billing`, the background pool): account notices and usage alerts.

A mail server that is down, slow or answers 4xx is retried with backoff (10 s doubling
to 10 min, ten times: about an hour and a half), so a request that asked for a message
never waits for SMTP. A 5xx (an address the server will never take) is logged and
dropped. Database outages retry the same way.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_ready
from sqlalchemy.exc import InterfaceError, OperationalError

from app.kit.config import get_settings
from app.mail.transport import MailDeferred, MailRefused, startup_line
from app.metering.alerts import ALERT_TASK, send_alert
from app.observability.metrics import mail_failed
from app.queue import celery_app
from app.users.notices import NOTICE_TASK, send_notice

logger = logging.getLogger(__name__)

MAIL_RETRY_OPTIONS: dict[str, Any] = {
    "autoretry_for": (MailDeferred, OperationalError, InterfaceError),
    "retry_backoff": 10,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 10,
    "ignore_result": True,
}


@worker_ready.connect
def say_where_mail_goes(**_kwargs: Any) -> None:
    unsent = get_settings().smtp_url is None  # then every message lands in this log
    logger.log(logging.WARNING if unsent else logging.INFO, startup_line(get_settings()))


@celery_app.task(name=NOTICE_TASK, **MAIL_RETRY_OPTIONS)
def account_notice(kind: str, user_id: str | None, address: str | None) -> None:
    try:
        send_notice(kind, user_id, address)
    except MailDeferred:
        mail_failed("deferred")
        raise  # retried with backoff (MAIL_RETRY_OPTIONS)
    except MailRefused as exc:
        mail_failed("refused")
        logger.error("account notice dropped: %s", exc)


@celery_app.task(name=ALERT_TASK, **MAIL_RETRY_OPTIONS)
def usage_alert(user_id: str, period: str, plan: str, kind: str, quota: int) -> None:
    try:
        send_alert(user_id, period, plan, kind, quota)
    except MailDeferred:
        mail_failed("deferred")
        raise  # retried with backoff (MAIL_RETRY_OPTIONS)
    except MailRefused as exc:
        mail_failed("refused")
        logger.error("usage alert dropped: %s", exc)
