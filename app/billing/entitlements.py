"""The data plane's view of an account's plan: `plan_of`, cached per process.

A metered call needs the plan before it reserves a credit. The plan is read in a worker
thread and kept `PLAN_CACHE_TTL_S`, so a subscription change is in force in every api
process within a second. While the database is unreachable, a plan read within
`db_outage_cache_s` (10 min) stays in force.
"""

from __future__ import annotations

import time

import anyio.to_thread

from app.billing.plans import Plan
from app.billing.service import plan_of
from app.config import get_settings
from app.db import new_session
from app.errors import unavailable_for
from app.ttl_cache import TTLCache

PLAN_CACHE_TTL_S = 1.0

_plans: TTLCache[str, Plan] = TTLCache(PLAN_CACHE_TTL_S)


def _read_plan(user_id: str) -> Plan:
    expires_at = time.monotonic() + PLAN_CACHE_TTL_S  # before the read, as for keys
    try:
        with new_session() as session:
            plan = plan_of(session, user_id)
    except Exception as exc:
        unavailable = unavailable_for(exc)
        if unavailable is None:
            raise
        # The database is down: the plan read within db_outage_cache_s still holds.
        last = _plans.get_recent(user_id, get_settings().db_outage_cache_s)
        if last is None:
            raise unavailable from exc
        return last
    _plans.put(user_id, plan, expires_at=expires_at)
    return plan


async def current_plan(user_id: str) -> Plan:
    """The account's plan now (at most `PLAN_CACHE_TTL_S` old)."""
    plan = _plans.get(user_id)
    if plan is None:
        plan = await anyio.to_thread.run_sync(_read_plan, user_id)
    return plan
