"""Usage alerts: one e-mail when an account enters `warning` (80 % of its quota) and one
when it reaches the quota (free: calls refused until `resetsAt`; standard: overage
starts), at most once each per month.

Decided in the commit script, not by beat. The commit (`scripts.COMMIT`) already runs
once per successful call and holds the exact `used` after the increment, so the one
call that crosses a threshold claims its alert there (an HSETNX on the counter: no
second call of the month can claim it, however many run at once) for a comparison or
two more per commit, in the round trip the call makes anyway. A beat task would have to
scan every account's counter each run and would send the mail minutes late. The claimed
alert leaves the call's path at once: the api hands `metering.usage_alert` to a thread,
which enqueues it; the call's answer does not wait for it.

The worker records the alert in `usage_alerts` (unique per account, month, kind and
quota) before it sends, and marks it sent after. So a Redis counter lost and rebuilt
(its claims go with it), a redelivered task or a second claim never mails twice: the
row says it was sent. If the enqueue fails, the claim is undone so that the next call
claims it again. Only a worker dying between the SMTP server's acceptance and the
mark could send one twice.
"""

from __future__ import annotations

import asyncio
import logging

import redis
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import col, select

from app.kit.clock import period_end, period_start, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.redis_client import sync_redis
from app.mail import transport
from app.metering.keys import counter_key
from app.metering.scripts import ALERT_QUOTA, ALERT_WARNING
from app.models import UsageAlert, User
from app.plans import Plan, quota_for
from app.queue import enqueue

logger = logging.getLogger(__name__)

ALERT_TASK = "metering.usage_alert"
WARNING, QUOTA = "warning", "quota"
WARNING_PERCENT = 80


def thresholds(plan: Plan) -> tuple[int, int]:
    """(warning, quota): the first `used` in `warning` (80 %, as `usage_state` counts it)
    and the quota."""
    quota = quota_for(plan)
    return (quota * WARNING_PERCENT + 99) // 100, quota


def alert_field(kind: str, plan: Plan) -> str:
    """The counter's field that claims `kind` (see `scripts.COMMIT`)."""
    warning, quota = thresholds(plan)
    return f"alert:w:{warning}" if kind == WARNING else f"alert:q:{quota}"


def announce(user_id: str, period: str, plan: Plan, alert: int) -> None:
    """A commit claimed an alert: enqueue it from a thread, off the call's path."""
    if alert not in (ALERT_WARNING, ALERT_QUOTA):
        return
    kind = QUOTA if alert == ALERT_QUOTA else WARNING
    asyncio.get_running_loop().run_in_executor(None, _enqueue, user_id, period, plan, kind)


def announce_now(user_id: str, period: str, plan: Plan, alert: int) -> None:
    """As `announce`, from a worker (no event loop): enqueued right here."""
    if alert in (ALERT_WARNING, ALERT_QUOTA):
        _enqueue(user_id, period, plan, QUOTA if alert == ALERT_QUOTA else WARNING)


def _enqueue(user_id: str, period: str, plan: Plan, kind: str) -> None:
    try:
        enqueue(ALERT_TASK, user_id, period, plan.value, kind, quota_for(plan))
    except Exception:
        logger.exception("usage alert of %s not enqueued; the next call claims it again", user_id)
        try:
            sync_redis().hdel(counter_key(user_id, period), alert_field(kind, plan))
        except redis.RedisError:
            logger.warning("usage alert claim of %s left in place", user_id)


def send_alert(user_id: str, period: str, plan: str, kind: str, quota: int) -> bool:
    """The worker's side: record, send, mark sent; False when it was sent before (or
    the account is gone). Raises transport.MailDeferred to be retried."""
    with new_session() as session:
        dialect = session.get_bind().dialect.name
        insert = pg_insert if dialect == "postgresql" else sqlite_insert
        values = {"user_id": user_id, "period": period, "kind": kind, "quota": quota}
        session.execute(
            insert(UsageAlert).values(**values, created_at=utcnow()).on_conflict_do_nothing()
        )
        session.commit()
    with new_session() as session:
        row = session.exec(
            select(UsageAlert)
            .where(
                col(UsageAlert.user_id) == user_id,
                col(UsageAlert.period) == period,
                col(UsageAlert.kind) == kind,
                col(UsageAlert.quota) == quota,
            )
            .with_for_update()  # one sender at a time; the next sees sent_at
        ).one()
        user = session.get(User, user_id)
        if row.sent_at is not None or user is None or user.deleted_at is not None:
            return False
        transport.send(compose(user.email, period, Plan(plan), kind, quota))
        row.sent_at = utcnow()
        session.add(row)
        session.commit()
    return True


def compose(to: str, period: str, plan: Plan, kind: str, quota: int) -> transport.Message:
    settings = get_settings()
    base = settings.base_url.rstrip("/")
    month = period_start(period).strftime("%B %Y")
    resets = period_end(period).strftime("%-d %B %Y, 00:00 UTC")
    if kind == WARNING:
        subject = f"You have used {WARNING_PERCENT} % of your credits for {month}"
        if plan is Plan.FREE:
            then = (
                f"At {quota:,} credits, data calls are refused (QUOTA_EXCEEDED) until "
                f"{resets}. The standard plan has no hard cap: {base}/dashboard/subscription"
            )
        else:
            then = (
                f"Past {quota:,} credits, calls go on and are billed as overage "
                f"({settings.price_currency_symbol}{settings.overage_price_per_1000} per 1,000 "
                f"credits). You can set a monthly cap: {base}/dashboard/usage"
            )
        used = f"Your account has used {WARNING_PERCENT} % of its {quota:,} credits for {month}."
        body = f"{used}\n\n{then}\n"
    elif plan is Plan.FREE:
        subject = f"Your free credits for {month} are used up"
        body = (
            f"Your account has used all {quota:,} free credits for {month}: data calls are "
            f"refused (QUOTA_EXCEEDED) until {resets}.\n\nTo go on now, upgrade to the "
            f"standard plan: {base}/dashboard/subscription\n"
        )
    else:
        subject = f"Overage has started for {month}"
        body = (
            f"Your account has used the {quota:,} credits its plan includes for {month}. "
            "Calls go on; each further 1,000 credits is billed as overage at "
            f"{settings.price_currency_symbol}{settings.overage_price_per_1000}.\n\n"
            f"Usage and your own monthly cap: {base}/dashboard/usage\n"
        )
    footer = f"\n-- \nGeospatial Data Service\n{base}/dashboard/usage\n"
    return transport.Message(to=to, subject=subject, text=body + footer, kind=f"usage_{kind}")
