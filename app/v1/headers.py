"""The headers of the HTTP data API's answers (and, at the end, how the OpenAPI document
describes each): the limits an answer was counted against
(`RateLimit-Policy` and `RateLimit`, draft-ietf-httpapi-ratelimit-headers-09), the
credits left in the month (`Credits-Remaining`), and caching (`Cache-Control`, `ETag`).

Policies (the token buckets of `app.metering.scripts` as quota policies: a bucket of
`burst` tokens refilled in `burst / rate` seconds):

- `"key"`: the API key's bucket; `"account"`: the bucket all the account's keys share;
- `"credits"`: the month's credits, when a limit refuses calls past them (the free plan's
  quota, or the account's own cap; a standard plan without a cap has none).

`RateLimit` gives each policy's remaining `r` and the seconds `t` until it is whole
again, as admission saw it; a refused call gives the policy that refused it with r=0 and
the wait. `Credits-Remaining` is the credits left before the limit, or, without one, of
the plan's monthly allotment (calls past it are overage).

`Credits-Charged` (0 for an error or a refusal), `Credits-Used`, `Credits-Quota`,
`Credits-Period`, `Credits-State` and `Credits-Reset` say what the call cost and where the
month stands, as `_meta["geosvc/usage"]` does on /mcp (`app.metering.readings`); a call
refused before it reached the meter (invalid arguments) has only `Credits-Charged: 0`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from app.geodata.service import FALLBACK_SOURCE
from app.kit.clock import period_end, period_start, utcnow
from app.kit.errors import AppError, QuotaExceeded, RateLimited
from app.metering.readings import MeterReading
from app.metering.refusals import credit_limit
from app.plans import Plan, limits_for, quota_for

# Answers deterministic for a data vintage may be kept by the client (never by a shared
# cache: a proxy would then answer other callers without their key being checked or
# charged). A fallback answer (the upstream was down) is not kept.
CACHEABLE = "private, max-age=86400"
NOT_CACHEABLE = "no-store"


@dataclass(frozen=True)
class Metering:
    """What admission and the commit said of a call's account, for its headers."""

    plan: Plan
    credit_cap: int | None
    period: str
    used: int | None = None  # credits used in the period, after this answer
    key_tokens: int | None = None
    account_tokens: int | None = None
    refused: AppError | None = None
    reading: MeterReading | None = None
    granted: int = 0  # credits an operator granted this month (`used` is net of them)


def credit_headers(reading: MeterReading | None) -> dict[str, str]:
    """The call's charge and the month's credits (see the module's note)."""
    if reading is None:
        return {"Credits-Charged": "0"}
    return {
        "Credits-Charged": str(reading.charged),
        "Credits-Used": str(reading.calls_used),
        "Credits-Quota": str(reading.quota),
        "Credits-Period": reading.period,
        "Credits-State": reading.state,
        "Credits-Reset": reading.resets_at,
    }


def _bucket(burst: int, rate: float) -> tuple[int, int]:
    """(quota, window s) of a token bucket."""
    return burst, max(1, math.ceil(burst / rate))


def _refill_s(burst: int, rate: float, tokens: int) -> int:
    return max(0, math.ceil((burst - tokens) / rate))


def limit_headers(state: Metering) -> dict[str, str]:
    limits = limits_for(state.plan)
    key = _bucket(limits.burst, limits.rate_per_s)
    account = _bucket(limits.account_burst, limits.account_rate_per_s)
    policies = [f'"key";q={key[0]};w={key[1]}', f'"account";q={account[0]};w={account[1]}']
    limit = credit_limit(state.plan, state.credit_cap)
    start, end = period_start(state.period), period_end(state.period)
    to_reset = max(0, math.ceil((end - utcnow()).total_seconds()))
    if limit is not None:  # a grant adds to the month's credits before the limit
        quota = limit + state.granted
        policies.append(f'"credits";q={quota};w={int((end - start).total_seconds())}')
    # One entry per policy: a bucket that refused (a batch's later items) says r=0 and
    # the wait, in place of what admission saw before it ran dry.
    entries: dict[str, str] = {}
    refused = state.refused
    refused_bucket = refused.details.get("limit") if isinstance(refused, RateLimited) else None
    if refused is not None and refused_bucket in ("key_rate", "account_rate"):
        name = "key" if refused_bucket == "key_rate" else "account"
        wait = math.ceil(float(refused.details.get("retryAfterSeconds", 1)))
        entries[name] = f'"{name}";r=0;t={wait}'
    if state.key_tokens is not None and state.account_tokens is not None:
        key_t = _refill_s(limits.burst, limits.rate_per_s, state.key_tokens)
        account_t = _refill_s(limits.account_burst, limits.account_rate_per_s, state.account_tokens)
        entries.setdefault("key", f'"key";r={state.key_tokens};t={key_t}')
        entries.setdefault("account", f'"account";r={state.account_tokens};t={account_t}')
    current = list(entries.values())
    headers = {"RateLimit-Policy": ", ".join(policies), **credit_headers(state.reading)}
    if state.used is not None or isinstance(refused, QuotaExceeded):
        allotment = limit if limit is not None else quota_for(state.plan)
        used = allotment if isinstance(refused, QuotaExceeded) else (state.used or 0)
        remaining = max(0, allotment - used)
        headers["Credits-Remaining"] = str(remaining)
        if limit is not None:
            current.append(f'"credits";r={remaining};t={to_reset}')
    if current:
        headers["RateLimit"] = ", ".join(current)
    return headers


def etag_of(body: bytes) -> str:
    """A strong validator of an answer's bytes."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """True when `If-None-Match` names `etag` (or is `*`): the client has this answer."""
    if not if_none_match:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


def cache_control(cacheable: bool, structured: dict[str, object]) -> str:
    fallback = str(structured.get("source", "")).startswith(FALLBACK_SOURCE)
    return CACHEABLE if cacheable and not fallback else NOT_CACHEABLE


# Each header as the OpenAPI document describes it (app/v1/openapi.py).
CREDIT_HEADERS = [
    "Credits-Charged",
    "Credits-Used",
    "Credits-Quota",
    "Credits-Period",
    "Credits-State",
    "Credits-Reset",
]
HEADERS: dict[str, dict[str, Any]] = {
    "RateLimit-Policy": {
        "description": 'Quota policies (IETF draft ratelimit-headers): "key" and "account" '
        'token buckets (q calls, refilled in w seconds); "credits" for the month when a '
        "limit refuses calls past them",
        "schema": {"type": "string"},
        "example": '"key";q=10;w=2, "account";q=20;w=2, "credits";q=1000;w=2592000',
    },
    "RateLimit": {
        "description": "What is left of each policy (r) and the seconds until it is whole "
        "again (t); on a refusal, the policy that refused it with r=0",
        "schema": {"type": "string"},
        "example": '"key";r=9;t=1, "account";r=19;t=1, "credits";r=998;t=601179',
    },
    "Map-Warnings": {
        "description": "On a PNG answer, what the map leaves out (markers outside the view, "
        "label characters the font lacks): the JSON answer's `warnings` as a JSON array "
        "(non-ASCII escaped); absent when there are none",
        "schema": {"type": "string"},
        "example": "[\"1 of 2 markers are outside the map's view and not drawn: 'Cairo'\"]",
    },
    "Credits-Remaining": {
        "description": "Credits left this month before the limit (the free quota or the "
        "account's cap), else of the plan's monthly allotment (standard: past it is overage)",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Credits-Charged": {
        "description": "Credits this call cost: 0 for an error or a refusal",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Credits-Used": {
        "description": "Credits used this month, this call's included; credits granted "
        "this month are not taken off (they raise Credits-Remaining). Absent when the call "
        "was refused before it was metered, e.g. invalid arguments",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Credits-Quota": {
        "description": "The plan's monthly credits",
        "schema": {"type": "integer", "minimum": 0},
    },
    "Credits-Period": {"description": "The month counted, YYYY-MM", "schema": {"type": "string"}},
    "Credits-State": {
        "description": "ok below 80 % of the quota (or of the account's own cap when "
        "lower; credits granted this month added), warning up to 100 %, over above",
        "schema": {"type": "string", "enum": ["ok", "warning", "over"]},
    },
    "Credits-Reset": {
        "description": "When the month's credits reset, ISO 8601 UTC",
        "schema": {"type": "string", "format": "date-time"},
    },
    "API-Version": {
        "description": "The dated API version the answer follows: the one the request "
        "pinned with its own API-Version header, else the current one",
        "schema": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        "example": "2026-12-07",
    },
    "Deprecation": {
        "description": "On an answer of a deprecated version: when it was deprecated "
        "(RFC 9745, @ and Unix seconds); its Link header rel=deprecation says where to read on",
        "schema": {"type": "string"},
        "example": "@1796601600",
    },
    "Sunset": {
        "description": "On an answer of a deprecated version: the day it stops being "
        "served (RFC 8594, an HTTP date); from then on it is refused 410",
        "schema": {"type": "string"},
        "example": "Tue, 01 Jun 2027 00:00:00 GMT",
    },
    "X-Request-ID": {
        "description": "The request's id (the caller's X-Request-ID when sane), in our logs",
        "schema": {"type": "string"},
    },
    "Retry-After": {
        "description": "Seconds to wait before retrying",
        "schema": {"type": "integer", "minimum": 1},
    },
    "WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}},
    "Cache-Control": {
        "description": "How long the answer may be kept",
        "schema": {"type": "string"},
    },
    "ETag": {"description": "The answer's validator (If-None-Match)", "schema": {"type": "string"}},
}
