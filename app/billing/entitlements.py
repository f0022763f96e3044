"""The data plane's view of an account: its plan, its own credit cap and whether its
e-mail is confirmed, cached per process.

A metered call needs them before it reserves a credit. They are read in a worker thread
and kept `ENTITLEMENTS_CACHE_TTL_S`, so a subscription or cap change, or a confirmed
address, is in force in every api process within a second. While the database is
unreachable, what was read within `db_outage_cache_s` (10 min) stays in force.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import anyio.to_thread

from app.config import get_settings
from app.db import new_session
from app.errors import unavailable_for
from app.models import User
from app.plans import Plan, plan_of
from app.ttl_cache import SingleFlight, TTLCache

ENTITLEMENTS_CACHE_TTL_S = 1.0


@dataclass(frozen=True)
class Entitlements:
    plan: Plan
    credit_cap: int | None  # the account's own monthly cap (None: none)
    email_verified: bool = True


_entitlements: TTLCache[str, Entitlements] = TTLCache(ENTITLEMENTS_CACHE_TTL_S)
_loads: SingleFlight[str, Entitlements] = SingleFlight()


def _read(user_id: str) -> Entitlements:
    expires_at = time.monotonic() + ENTITLEMENTS_CACHE_TTL_S  # before the read, as for keys
    try:
        with new_session() as session:
            user = session.get(User, user_id)
            found = Entitlements(
                plan=plan_of(session, user_id),
                credit_cap=user.monthly_credit_cap if user is not None else None,
                email_verified=user is not None and user.email_verified_at is not None,
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
