"""Overage meter events from the ledger to the fake Stripe: batches, identifiers, and the
crash window between send and mark (service level, both backends)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TypeVar

from sqlmodel import Session, col, select

from app.billing.meter_reports import meter_identifier, report_overage
from app.billing.stripe_provider import stripe_client
from app.kit.clock import period_end, period_of, utcnow
from app.kit.db import new_session
from app.kit.ids import new_user_id
from app.models import StripeCustomer, StripeMeterReport, User
from tests.billing.conftest import STANDARD_QUOTA
from tests.fakes.stripe import METER_EVENT, FakeStripe
from tests.support.factories import record_calls
from tests.support.fixtures import Backend

T = TypeVar("T")


def stripe_account(session: Session) -> tuple[str, str]:
    """An account with a customer at the fake Stripe: (user id, customer id)."""
    user_id = new_user_id()
    session.add(User(id=user_id, email=f"{user_id}@example.com", password_hash="x"))
    session.flush()
    customer = stripe_client().v1.customers.create({"metadata": {"user_id": user_id}})
    session.add(StripeCustomer(user_id=user_id, customer_id=customer.id))
    session.commit()
    return user_id, str(customer.id)


def reported(fake: FakeStripe, customer_id: str) -> int:
    return sum(int(e["payload"]["value"]) for e in fake.meter_events(customer_id))


def sends_of(fake: FakeStripe, user_id: str) -> int:
    requests = fake.requests("POST", "/v1/billing/meter_events")
    return sum(r.params["identifier"].startswith(f"geosvc-overage-{user_id}-") for r in requests)


def report() -> int:
    return report_overage(new_session, stripe_client)


class TestOverageMeter:
    def test_only_usage_above_the_quota_is_reported_in_batches(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        user_id, customer = stripe_account(session)
        record_calls(session, user_id, STANDARD_QUOTA)
        report()
        assert fake_stripe.meter_events(customer) == []

        record_calls(session, user_id, 3)
        report()
        record_calls(session, user_id, 2)
        report()
        report()  # nothing new: nothing sent

        events = fake_stripe.meter_events(customer)
        period = period_of(utcnow())
        assert [(e["event_name"], e["payload"]["value"], e["identifier"]) for e in events] == [
            (METER_EVENT, "3", meter_identifier(user_id, period, 0, 3)),
            (METER_EVENT, "2", meter_identifier(user_id, period, 3, 5)),
        ]
        assert reported(fake_stripe, customer) == 5

    def test_a_batch_sent_but_not_marked_is_counted_once(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        user_id, customer = stripe_account(session)
        record_calls(session, user_id, STANDARD_QUOTA + 4)
        report()
        # as if the process died after Stripe took the batch, before it was marked sent
        for batch in session.exec(
            select(StripeMeterReport).where(StripeMeterReport.user_id == user_id)
        ):
            batch.sent_at = None
            session.add(batch)
        session.commit()
        sends_before = sends_of(fake_stripe, user_id)

        assert report() >= 1

        assert sends_of(fake_stripe, user_id) == sends_before + 1
        assert reported(fake_stripe, customer) == 4
        session.expire_all()
        unsent = session.exec(
            select(StripeMeterReport).where(
                StripeMeterReport.user_id == user_id, col(StripeMeterReport.sent_at).is_(None)
            )
        ).all()
        assert unsent == []

    def test_lost_answers_are_retried_with_the_same_identifier(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        user_id, customer = stripe_account(session)
        record_calls(session, user_id, STANDARD_QUOTA + 7)
        fake_stripe.lose_answers("/v1/billing/meter_events", 10)  # outlasts the client's retries
        try:
            report()
        finally:
            fake_stripe.lose_answers("/v1/billing/meter_events", 0)
        batch = session.exec(
            select(StripeMeterReport).where(StripeMeterReport.user_id == user_id)
        ).one()
        assert batch.sent_at is None
        assert reported(fake_stripe, customer) == 7  # Stripe has it; we do not know yet

        report()

        session.refresh(batch)
        assert batch.sent_at is not None
        assert reported(fake_stripe, customer) == 7
        identifiers = {
            r.params["identifier"] for r in fake_stripe.requests("POST", "/v1/billing/meter_events")
        }
        assert meter_identifier(user_id, batch.period, 0, 7) in identifiers

    def test_last_months_late_usage_is_reported_inside_last_month(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        user_id, customer = stripe_account(session)
        last_month = period_of(utcnow().replace(day=1) - timedelta(days=1))
        record_calls(session, user_id, STANDARD_QUOTA + 2, period=last_month)

        report()

        (event,) = fake_stripe.meter_events(customer)
        assert event["payload"]["value"] == "2"
        assert event["timestamp"] == int(period_end(last_month).timestamp()) - 1

    def test_accounts_without_a_stripe_customer_are_not_reported(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        user_id = new_user_id()
        session.add(User(id=user_id, email=f"{user_id}@example.com", password_hash="x"))
        session.commit()
        record_calls(session, user_id, STANDARD_QUOTA + 3)
        report()
        assert (
            session.exec(
                select(StripeMeterReport).where(StripeMeterReport.user_id == user_id)
            ).all()
            == []
        )


def run_twice_at_once(task: Callable[[], T]) -> list[T]:
    """The task body in two threads released together, as two beats' messages would be."""
    barrier = threading.Barrier(2)

    def run() -> T:
        barrier.wait(timeout=10)
        return task()

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda _: run(), range(2)))


class TestTwoBeats:
    def test_two_runs_at_once_send_an_unsent_batch_once(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        from workers.billing import report_meter_events

        user_id, customer = stripe_account(session)
        record_calls(session, user_id, STANDARD_QUOTA + 3)
        fake_stripe.lose_answers("/v1/billing/meter_events", 10)  # recorded, left unsent
        try:
            report()
        finally:
            fake_stripe.lose_answers("/v1/billing/meter_events", 0)
        sends_before = sends_of(fake_stripe, user_id)
        fake_stripe.slow_answers("/v1/billing/meter_events", 0.5)
        try:
            results = run_twice_at_once(report_meter_events)
        finally:
            fake_stripe.slow_answers("/v1/billing/meter_events", 0)

        assert sorted(results) == [0, 1]  # one run did the work, the other stood aside
        assert sends_of(fake_stripe, user_id) == sends_before + 1
        assert reported(fake_stripe, customer) == 3


class TestCatchUp:
    def test_a_run_an_hour_into_the_next_month_reports_the_month_once(
        self, use_stripe: Backend, session: Session, fake_stripe: FakeStripe
    ) -> None:
        user_id, customer = stripe_account(session)
        period = period_of(utcnow())
        record_calls(session, user_id, STANDARD_QUOTA + 6)  # never reported: beat was down
        an_hour_late = period_end(period) + timedelta(hours=1)

        assert report_overage(new_session, stripe_client, now=an_hour_late) == 1
        assert report_overage(new_session, stripe_client, now=an_hour_late) == 0

        (event,) = fake_stripe.meter_events(customer)
        assert event["payload"]["value"] == "6"
        assert event["identifier"] == meter_identifier(user_id, period, 0, 6)
        assert event["timestamp"] == int(period_end(period).timestamp()) - 1
