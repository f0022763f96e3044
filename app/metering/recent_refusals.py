"""Refusals Redis has just given, given again in this process without asking Redis
(issue 36, item 5; issue 58).

A client that ignores Retry-After sends hundreds of calls a second, each of which would
cost the api a Redis round trip only to hear "no" again. Nothing is held or charged, and
each kind is kept only while Redis would give the same answer:

- **rate** (per key): until the `retryAfterSeconds` Redis gave. Within that wait no
  token can come back to that key (its own bucket, or its account's, refills no sooner,
  and other keys only take tokens). A key refused never holds back another key of its
  account. Only a one-token refusal is remembered (a heavy call's wait is for several
  tokens, and a one-token call may pass sooner); a remembered key refuses calls of any
  weight.
- **concurrency** (per account): until its `retryAfterSeconds` (0.5 s), or until this
  process settles a call of that account (`slot_freed`), whichever comes first. A call
  settled by another api process is not seen here: a call may then be refused at most
  the wait the first refusal announced after a slot freed.
- **credits** (per account: the free quota or the account's own cap), only when the
  used credits alone reached the limit (calls in flight may still give theirs back):
  for `CREDITS_HELD_S`, never past the period's end, and only while the account's plan,
  cap and granted credits are the ones it was refused under (`Terms`). So an upgrade, a
  raised or removed cap or a grant lifts it as soon as this process reads the new
  entitlements (within their cache's second), a new month at once, and a counter that
  reconciliation repaired downwards within `CREDITS_HELD_S`.

A call refused here takes no token from its key's bucket (Redis takes one for a call
it refuses for concurrency or credits): such a refusal costs the service next to
nothing, and a call let in still pays its token.
Bounded: past `MAX_KEYS` entries of a kind, expired ones go first, then the oldest half.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from app.kit.errors import AppError, QuotaExceeded, RateLimited
from app.metering.refusals import CONCURRENCY_RETRY_S, rate_limited
from app.metering.scripts import ACCOUNT_RATE, CONCURRENCY, KEY_RATE
from app.observability import metrics
from app.plans import Plan, limits_for

MAX_KEYS = 10_000
K = TypeVar("K")
V = TypeVar("V")
# How long a credit refusal is given again without Redis (see the module's docstring).
CREDITS_HELD_S = 1.0


@dataclass(frozen=True, slots=True)
class Terms:
    """What a credit refusal depends on besides the counter: a change lifts it."""

    plan: Plan
    credit_cap: int | None
    credit_limit: int | None  # the quota or the cap in force (the settings can change it)
    granted: int
    period: str


@dataclass(frozen=True, slots=True)
class _Held:
    until: float  # time.monotonic()
    error: QuotaExceeded | RateLimited
    outcome: str  # the metric's reason: "concurrency", "quota" or "spend_cap"
    terms: Terms | None  # for credits only


# (user id, key id) -> (time.monotonic() until which it is refused, the refusing bucket)
_refused: dict[tuple[str, str], tuple[float, int]] = {}
# user id -> the account's concurrency or credit refusal
_accounts: dict[str, _Held] = {}


def remember(user_id: str, key_id: str, status: int, wait_ms: int, cost: int) -> None:
    """Note Redis's rate refusal of a one-token call of this key."""
    if status not in (KEY_RATE, ACCOUNT_RATE) or cost != 1 or wait_ms <= 0:
        return
    if len(_refused) >= MAX_KEYS:
        _evict(_refused, lambda entry: entry[0])
    _refused[(user_id, key_id)] = (time.monotonic() + wait_ms / 1000, status)


def remember_account(
    user_id: str,
    status: int,
    error: AppError,
    *,
    used: int,
    limit: int | None,
    terms: Terms,
    period_left_s: float,
) -> None:
    """Note Redis's concurrency or credit refusal of one of the account's calls."""
    now = time.monotonic()
    if status == CONCURRENCY and isinstance(error, RateLimited):
        held = _Held(now + CONCURRENCY_RETRY_S, error, "concurrency", None)
    elif isinstance(error, QuotaExceeded) and limit is not None and used >= limit:
        outcome = "spend_cap" if error.details.get("limit") == "spend_cap" else "quota"
        held = _Held(now + min(CREDITS_HELD_S, period_left_s), error, outcome, terms)
    else:
        return
    if len(_accounts) >= MAX_KEYS:
        _evict(_accounts, lambda entry: entry.until)
    _accounts[user_id] = held


def slot_freed(user_id: str) -> None:
    """This process settled (committed or released) a call of the account."""
    held = _accounts.get(user_id)
    if held is not None and held.terms is None:
        del _accounts[user_id]


def check(
    user_id: str, key_id: str, plan: Plan, *, calls: int = 1, terms: Terms | None = None
) -> None:
    """Raise the refusal Redis would answer while the key's (or, given the account's
    `terms`, the account's) remembered refusal lasts; its `remembered_for_s` says how much
    longer."""
    entry = _refused.get((user_id, key_id))
    if entry is not None:
        until, status = entry
        wait_ms = math.ceil((until - time.monotonic()) * 1000)
        if wait_ms > 0:
            metrics.call_refused(plan.value, "rate", calls)
            rate_refusal = refused(status, plan, wait_ms, calls)
            rate_refusal.remembered_for_s = wait_ms / 1000
            raise rate_refusal
        _refused.pop((user_id, key_id), None)
    if terms is None:
        return
    held = _accounts.get(user_id)
    if held is None:
        return
    left_s = held.until - time.monotonic()
    if left_s <= 0 or (held.terms is not None and held.terms != terms):
        _accounts.pop(user_id, None)
        return
    metrics.call_refused(plan.value, held.outcome, calls)
    error = _fresh(held.error)
    error.remembered_for_s = left_s
    raise error


def refused(status: int, plan: Plan, wait_ms: int, calls: int = 1) -> RateLimited:
    return rate_limited(status, plan, limits_for(plan), wait_ms, calls=calls)


def forget_all() -> None:
    """Drop every remembered refusal (tests that change limits behind the api's back)."""
    _refused.clear()
    _accounts.clear()


def _fresh(error: QuotaExceeded | RateLimited) -> QuotaExceeded | RateLimited:
    """A new exception saying the same (one raised twice would grow its traceback)."""
    again = type(error)(error.message, **error.details)
    again.reading = error.reading
    return again


def _evict(entries: dict[K, V], until: Callable[[V], float]) -> None:
    now = time.monotonic()
    for key in [key for key, value in entries.items() if until(value) <= now]:
        del entries[key]
    if len(entries) >= MAX_KEYS:
        for key in list(entries)[: MAX_KEYS // 2]:
            del entries[key]
