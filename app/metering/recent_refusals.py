"""Keys Redis has just refused for their rate, refused again in this process until the
`retryAfterSeconds` Redis gave, without asking Redis (issue 36, item 5).

A client that ignores Retry-After sends hundreds of calls a second, each of which would
cost the api a Redis round trip only to hear "no" again. Within the wait Redis named no
token can come back to that key (its own bucket, or its account's, refills no sooner,
and other keys only take tokens), so the answer is the one Redis would give. Per key:
a key refused never holds back another key of its account. Nothing is held or charged.
Only a one-token refusal is remembered (a heavy call's wait is for several tokens, and
a one-token call may pass sooner); a remembered key refuses calls of any weight.
Bounded: past `MAX_KEYS` expired entries go first, then the oldest half.
"""

from __future__ import annotations

import math
import time

from app.kit.errors import RateLimited
from app.metering.refusals import rate_limited
from app.metering.scripts import ACCOUNT_RATE, KEY_RATE
from app.observability import metrics
from app.plans import Plan, limits_for

MAX_KEYS = 10_000

# (user id, key id) -> (time.monotonic() until which it is refused, the refusing bucket)
_refused: dict[tuple[str, str], tuple[float, int]] = {}


def remember(user_id: str, key_id: str, status: int, wait_ms: int, cost: int) -> None:
    """Note Redis's rate refusal of a one-token call of this key."""
    if status not in (KEY_RATE, ACCOUNT_RATE) or cost != 1 or wait_ms <= 0:
        return
    if len(_refused) >= MAX_KEYS:
        _evict()
    _refused[(user_id, key_id)] = (time.monotonic() + wait_ms / 1000, status)


def check(user_id: str, key_id: str, plan: Plan, *, calls: int = 1) -> None:
    """Raise the RateLimited Redis would answer while this key's wait lasts."""
    entry = _refused.get((user_id, key_id))
    if entry is None:
        return
    until, status = entry
    wait_ms = math.ceil((until - time.monotonic()) * 1000)
    if wait_ms <= 0:
        _refused.pop((user_id, key_id), None)
        return
    metrics.call_refused(plan.value, "rate", calls)
    raise refused(status, plan, wait_ms, calls)


def refused(status: int, plan: Plan, wait_ms: int, calls: int = 1) -> RateLimited:
    return rate_limited(status, plan, limits_for(plan), wait_ms, calls=calls)


def _evict() -> None:
    now = time.monotonic()
    for key in [key for key, (until, _) in _refused.items() if until <= now]:
        del _refused[key]
    if len(_refused) >= MAX_KEYS:
        for key in list(_refused)[: MAX_KEYS // 2]:
            del _refused[key]
