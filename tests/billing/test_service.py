"""Subscription state moves at a chosen instant (service level, both backends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session

from app import plans
from app.billing import service
from app.billing.providers import LocalProvider, get_provider
from app.kit.errors import Conflict, NotFound, PaymentProviderUnavailable
from app.kit.ids import new_user_id
from app.models import Subscription, User
from app.plans import Plan
from app.runtime import reload_settings

NOV_15 = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
DEC_1 = datetime(2026, 12, 1, tzinfo=UTC)


def new_account(session: Session) -> str:
    user_id = new_user_id()
    session.add(User(id=user_id, email=f"{user_id}@example.com", password_hash="x"))
    session.commit()
    return user_id


def subscribed(session: Session, *, at: datetime = NOV_15) -> str:
    user_id = new_account(session)
    service.start_checkout(session, user_id, now=at)
    subscription = plans.get_subscription(session, user_id)
    assert subscription is not None
    assert subscription.checkout_id
    service.complete_checkout(session, user_id, subscription.checkout_id, now=at)
    session.commit()
    return user_id


def row(session: Session, user_id: str) -> Subscription:
    session.expire_all()
    subscription = plans.get_subscription(session, user_id)
    assert subscription is not None
    return subscription


class TestPeriods:
    def test_the_period_is_the_calendar_month_of_payment(self, session: Session) -> None:
        user_id = subscribed(session, at=datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC))
        response = service.subscription_of(session, user_id, now=NOV_15.replace(month=12))
        assert response.currentPeriodStart == "2026-12-01T00:00:00.000Z"
        assert response.currentPeriodEnd == "2027-01-01T00:00:00.000Z"

    def test_plan_follows_the_subscription_up_to_the_instant_it_ends(
        self, session: Session
    ) -> None:
        user_id = subscribed(session)
        service.cancel_subscription(session, user_id, now=NOV_15)
        session.commit()
        just_before = DEC_1 - timedelta(microseconds=1)

        assert plans.plan_of(session, user_id, now=just_before) is Plan.STANDARD
        assert plans.has_subscription(session, user_id, now=just_before)
        assert plans.plan_of(session, user_id, now=DEC_1) is Plan.FREE
        assert not plans.has_subscription(session, user_id, now=DEC_1)

    def test_a_free_account_has_no_subscription(self, session: Session) -> None:
        user_id = new_account(session)
        assert plans.plan_of(session, user_id) is Plan.FREE
        assert not plans.has_subscription(session, user_id)
        service.start_checkout(session, user_id, now=NOV_15)
        session.commit()
        assert plans.plan_of(session, user_id) is Plan.FREE


class TestSettlingOnRead:
    """A period end is applied when the subscription is next read (`subscription_of`)."""

    def test_cancels_ended_renews_running_and_leaves_the_rest(self, session: Session) -> None:
        cancelling = subscribed(session)
        service.cancel_subscription(session, cancelling, now=NOV_15)
        renewing = subscribed(session)
        running = subscribed(session, at=DEC_1)  # period December: not ended on Dec 1
        past_due = subscribed(session)
        row(session, past_due).status = "past_due"
        session.commit()

        moment = DEC_1 + timedelta(hours=1)
        for user_id in (cancelling, renewing, running, past_due):
            service.subscription_of(session, user_id, now=moment)
        session.commit()

        ended = row(session, cancelling)
        assert (ended.status, ended.plan, ended.cancel_at_period_end) == ("canceled", "free", True)
        renewed = row(session, renewing)
        assert (renewed.status, renewed.plan) == ("active", "standard")
        response = service.to_response(renewed, DEC_1)
        assert (response.currentPeriodStart, response.currentPeriodEnd) == (
            "2026-12-01T00:00:00.000Z",
            "2027-01-01T00:00:00.000Z",
        )
        assert row(session, running).current_period_end is not None
        assert service.to_response(row(session, running), DEC_1).currentPeriodEnd == (
            "2027-01-01T00:00:00.000Z"
        )
        assert row(session, past_due).status == "past_due"

    def test_reading_it_twice_changes_nothing_more(self, session: Session) -> None:
        user_id = subscribed(session)
        service.cancel_subscription(session, user_id, now=NOV_15)
        session.commit()
        moment = DEC_1 + timedelta(days=40)
        first = service.subscription_of(session, user_id, now=moment)
        session.commit()

        assert service.subscription_of(session, user_id, now=moment) == first
        assert not service.settle(row(session, user_id), moment)
        assert row(session, user_id).status == "canceled"


class TestCheckoutRules:
    def test_completing_a_replaced_or_foreign_checkout_is_404(self, session: Session) -> None:
        alice, bob = new_account(session), new_account(session)
        service.start_checkout(session, alice, now=NOV_15)
        checkout_id = row(session, alice).checkout_id
        assert checkout_id is not None
        with pytest.raises(NotFound):
            service.complete_checkout(session, bob, checkout_id, now=NOV_15)
        with pytest.raises(NotFound):
            service.pending_checkout(session, bob, checkout_id)

    def test_a_checkout_of_a_canceled_subscription_is_closed(self, session: Session) -> None:
        user_id = subscribed(session)
        old_checkout = row(session, user_id).checkout_id
        assert old_checkout is not None
        service.cancel_subscription(session, user_id, now=NOV_15)
        service.subscription_of(session, user_id, now=DEC_1)
        session.commit()
        with pytest.raises(Conflict):
            service.complete_checkout(session, user_id, old_checkout, now=DEC_1)


class TestProviders:
    def test_local_is_the_default(self, session: Session) -> None:
        assert isinstance(get_provider(), LocalProvider)

    def test_stripe_without_a_secret_key_says_which_setting(
        self, session: Session, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        user_id = new_account(session)
        monkeypatch.setenv("GEOSVC_PAYMENT_PROVIDER", "stripe")
        reload_settings()

        with pytest.raises(PaymentProviderUnavailable, match="GEOSVC_STRIPE_SECRET_KEY"):
            service.start_checkout(session, user_id, now=NOV_15)
        # reading needs no provider
        assert service.subscription_of(session, user_id, now=NOV_15).status == "none"
