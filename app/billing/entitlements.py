"""The data plane's view of an account: its plan, its own credit cap, whether its
e-mail is confirmed and the credits granted this month, cached per process.

A metered call needs them before it reserves a credit. They are read in a worker thread
and kept `ENTITLEMENTS_CACHE_TTL_S`, so a subscription or cap change, or a confirmed
address, is in force in every api process within a second. While the database is
unreachable, what was read within `db_outage_cache_s` (10 min) stays in force.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio.to_thread

from app.kit.clock import period_of, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import unavailable_for
from app.kit.ttl_cache import SingleFlight, TTLCache
from app.metering.ledger import granted_in_period
from app.models import User
from app.plans import Plan, plan_of

ENTITLEMENTS_CACHE_TTL_S = 1.0


@dataclass(frozen=True)
class Entitlements:
    plan: Plan
    credit_cap: int | None  # the account's own monthly cap (None: none)
    email_verified: bool = True
    granted: int = 0  # credits an operator granted in `granted_period` (the ledger's)
    granted_period: str = ""

    def granted_now(self) -> int:
        """Credits granted for this month (0 when this read was of the month before)."""
        return self.granted if period_of(utcnow()) == self.granted_period else 0


_entitlements: TTLCache[str, Entitlements] = TTLCache(ENTITLEMENTS_CACHE_TTL_S)
_loads: SingleFlight[str, Entitlements] = SingleFlight()


def _read(user_id: str) -> Entitlements:
    expires_at = time.monotonic() + ENTITLEMENTS_CACHE_TTL_S  # before the read, as for keys
    try:
        with new_session() as session:
            user = session.get(User, user_id)
            period = period_of(utcnow())
            found = Entitlements(
                plan=plan_of(session, user_id),
                credit_cap=user.monthly_credit_cap if user is not None else None,
                email_verified=user is not None and user.email_verified_at is not None,
                granted=granted_in_period(session, user_id, period),
                granted_period=period,
            )
    except Exception as exc:
        unavailable = unavailable_for(exc)
        if unavailable is None:
            raise
        # The database is down: what was read within db_outage_cache_s still holds.
        last = _entitlements.get_recent(user_id, get_settings().db_outage_cache_s)
        if last is None:
            raise unavailable from exc
        return last
    _entitlements.put(user_id, found, expires_at=expires_at)
    return found


async def current_entitlements(user_id: str) -> Entitlements:
    """The account's plan and cap now (at most `ENTITLEMENTS_CACHE_TTL_S` old)."""
    found = _entitlements.get(user_id)
    if found is None:  # one read for all the concurrent misses of an account
        found = await _loads.load(user_id, lambda: anyio.to_thread.run_sync(_read, user_id))
    return found
