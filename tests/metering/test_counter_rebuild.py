"""Issue 10, item 9: after a Redis restart or flush, a free account's first reservation
rebuilds its counter from the ledger before deciding (real Redis, both databases)."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.errors import QuotaExceeded
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn
from app.metering.service import release, reserve
from app.plans import Plan
from tests.metering.conftest import Accounts


def ledger_usage(session: Session, user_id: str, credits: int) -> None:
    period = period_of(utcnow())
    events = [
        UsageEventIn(
            call_id=f"call_rebuild_{user_id}_{n}",
            user_id=user_id,
            tool="geocode",
            credits=1,
            period=period,
            created_at=utcnow(),
        )
        for n in range(credits)
    ]
    record_events(session, events)
    session.commit()


async def test_account_at_its_cap_stays_capped_after_a_flush(
    accounts: Accounts, session: Session
) -> None:
    quota = get_settings().free_quota
    user_id = accounts.create(session)
    ledger_usage(session, user_id, quota)
    accounts.forget_counters([user_id])  # what a flushed or restarted Redis looks like

    with pytest.raises(QuotaExceeded) as refused:
        await reserve(user_id, Plan.FREE)

    assert refused.value.details["used"] == quota
    assert accounts.used(user_id, period_of(utcnow())) == quota


async def test_account_under_its_cap_gets_only_what_is_left(
    accounts: Accounts, session: Session
) -> None:
    quota = get_settings().free_quota
    user_id = accounts.create(session)
    ledger_usage(session, user_id, quota - 1)
    accounts.forget_counters([user_id])

    granted = await reserve(user_id, Plan.FREE)
    with pytest.raises(QuotaExceeded):
        await reserve(user_id, Plan.FREE)
    await release(granted)
