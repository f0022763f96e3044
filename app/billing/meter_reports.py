"""Overage reported to Stripe as meter events, from the SQL ledger (the truth).

What is reported: usage above the standard quota in a ledger period (calendar month,
UTC), i.e. the overage the metered price charges for; the quota itself is paid by the
subscription price. Free accounts are refused at their quota, so only standard accounts
ever have overage. Only accounts with a Stripe customer are reported.

How, per account and period (the current one and the one before, for late ledger writes):
1. A batch that was recorded but not marked sent (a crash or error between send and mark)
   is sent again with its identifier. Stripe keeps an identifier unique and answers a
   repeat with "already exists", which counts as delivered.
2. Otherwise, if the overage now exceeds what the last batch reached, one new batch
   covers the difference: recorded first with a deterministic identifier derived from
   (account, period, overage before, overage after), then sent, then marked sent. A
   second run racing for the same batch loses on the unique (account, period, start).
The meter event's timestamp lies inside the period, so Stripe bills it with that month.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import stripe
from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import Session, col, select

from app.kit.clock import as_utc, period_end, period_of, period_start, utcnow
from app.kit.config import get_settings
from app.kit.errors import PaymentProviderUnavailable
from app.metering.ledger import totals_by_account
from app.models import StripeCustomer, StripeMeterReport
from app.plans import Plan, quota_for

logger = logging.getLogger(__name__)

REPORT_TASK = "billing.report_meter_events"


def meter_identifier(user_id: str, period: str, overage_from: int, overage_to: int) -> str:
    return f"geosvc-overage-{user_id}-{period}-{overage_from}-{overage_to}"


def _periods(now: datetime) -> list[str]:
    current = period_of(now)
    return [period_of(period_start(current) - timedelta(days=1)), current]


def _event_timestamp(period: str, now: datetime) -> int:
    """Now, or the last second of a period that has ended (Stripe accepts 35 days back)."""
    last_second = period_end(period) - timedelta(seconds=1)
    return int(min(now, last_second).timestamp())


def _send(client: stripe.StripeClient, report: StripeMeterReport, now: datetime) -> bool:
    """Send one batch; True when Stripe has it (now or from an earlier send)."""
    event_name = get_settings().stripe_meter_event
    assert event_name is not None
    try:
        client.v1.billing.meter_events.create(
            {
                "event_name": event_name,
                "identifier": report.identifier,
                "timestamp": _event_timestamp(report.period, now),
                "payload": {
                    "stripe_customer_id": report.customer_id,
                    "value": str(report.overage_to - report.overage_from),
                },
            }
        )
    except stripe.InvalidRequestError as exc:
        if "already exists" in str(exc.user_message or ""):
            return True  # sent before the crash/timeout that kept it unmarked
        logger.error("Stripe refused meter batch %s: %s", report.identifier, exc.user_message)
        return False
    except stripe.StripeError as exc:
        logger.warning("meter batch %s not sent: %s", report.identifier, exc.user_message)
        return False
    except PaymentProviderUnavailable as exc:  # the Stripe breaker is open: next run
        logger.warning("meter batch %s not sent: %s", report.identifier, exc.message)
        return False
    return True


def _send_and_mark(
    new_session: Callable[[], Session],
    client: stripe.StripeClient,
    report: StripeMeterReport,
    now: datetime,
) -> bool:
    if not _send(client, report, now):
        return False
    with new_session() as session:
        stored = session.get(StripeMeterReport, report.id)
        if stored is not None and stored.sent_at is None:
            stored.sent_at = utcnow()
            session.add(stored)
            session.commit()
    return True


def _new_batches(session: Session, now: datetime) -> list[StripeMeterReport]:
    """Record (not send) one batch per account and period whose overage grew."""
    quota = quota_for(Plan.STANDARD)
    customers = {row.user_id: row.customer_id for row in session.exec(select(StripeCustomer))}
    reached_query = (
        select(
            StripeMeterReport.user_id,
            StripeMeterReport.period,
            func.max(StripeMeterReport.overage_to),
        )
        .where(col(StripeMeterReport.period).in_(_periods(now)))
        .group_by(col(StripeMeterReport.user_id), col(StripeMeterReport.period))
    )
    reached = {(user, period): int(top) for user, period, top in session.exec(reached_query)}
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    batches = []
    for user_id, period, used in totals_by_account(session, _periods(now)):
        customer_id = customers.get(user_id)
        overage = used - quota
        start = reached.get((user_id, period), 0)
        if customer_id is None or overage <= start:
            continue
        batch = StripeMeterReport(
            user_id=user_id,
            customer_id=customer_id,
            period=period,
            overage_from=start,
            overage_to=overage,
            identifier=meter_identifier(user_id, period, start, overage),
            created_at=now,
        )
        # a run racing for the same batch inserts nothing here, and that run sends it
        inserted = session.execute(
            insert(StripeMeterReport)
            .values(batch.model_dump(exclude={"id", "sent_at"}))
            .on_conflict_do_nothing()
            .returning(col(StripeMeterReport.id))
        ).first()
        if inserted is not None:
            batch.id = inserted[0]
            batches.append(batch)
    session.commit()
    return batches


def report_overage(
    new_session: Callable[[], Session],
    client_factory: Callable[[], stripe.StripeClient],
    *,
    now: datetime | None = None,
) -> int:
    """Send unsent batches, then new ones; returns how many Stripe now has."""
    settings = get_settings()
    if settings.payment_provider != "stripe" or not settings.stripe_meter_event:
        return 0
    now = as_utc(now or utcnow())
    client = client_factory()
    with new_session() as session:
        pending = list(
            session.exec(
                select(StripeMeterReport)
                .where(col(StripeMeterReport.sent_at).is_(None))
                .order_by(col(StripeMeterReport.id))
            )
        )
    sent = sum(_send_and_mark(new_session, client, report, now) for report in pending)
    with new_session() as session:
        batches = _new_batches(session, now)
    sent += sum(_send_and_mark(new_session, client, report, now) for report in batches)
    return sent
