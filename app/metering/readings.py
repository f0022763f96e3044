"""What an answer says of the account's credits: the call's charge and where the month
stands, read from what admission and the commit already returned (no Redis call of its
own). On /mcp it is the result's `_meta["geosvc/usage"]`; on /v1, the `Credits-*` headers.

`used` is the period's credits used, this call's charge included. The commit's count when
the answer waited for it (/v1, batches); else (an /mcp call, answered while Redis runs
the commit) the count admission read plus this call's charge. The two agree for calls
made one at a time; with calls of one account running at once, an answer does not count
those that finished while it ran (the next answer does).

Credits an operator granted (`geosvc admin grant`) are negative rows of the ledger, so the
counter holds the credits used less those granted (`net_used`, what admission compares
with the limit). An answer shows them apart: `used` counts the calls (never negative),
`granted` the credits given this month, and the state is where `net_used` stands against
the limit that refuses calls (the quota, or the account's own cap when lower), so a
refusal by the spend cap never says `ok`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from app.kit.clock import iso_ms, period_end
from app.plans import Plan, quota_for

USAGE_META_KEY = "geosvc/usage"

UsageState = Literal["ok", "warning", "over"]


def state_limit(quota: int, credit_limit: int | None) -> int:
    """What the state is measured against: the quota, or the credit limit when lower."""
    return quota if credit_limit is None else min(quota, credit_limit)


def calls_used(net_used: int, granted: int) -> int:
    """Credits the calls used: the counter (less what was granted) plus the grants."""
    return max(0, net_used + granted)


def usage_state(used: int, quota: int) -> UsageState:
    """ok below 80 % of quota, warning from 80 % up to and including 100 %, over above.

    Compared in integers, so 79.999 % is still ok even though `percent` rounds it to 80.
    """
    if used * 100 < quota * 80:
        return "ok"
    if used <= quota:
        return "warning"
    return "over"


@functools.lru_cache(maxsize=8)
def resets_at(period: str) -> str:
    """When `period` ends, as the answers say it; every answer carries one (a few
    periods a process's life: kept, not recomputed per answer)."""
    return iso_ms(period_end(period))


@dataclass(frozen=True)
class MeterReading:
    """A call's charge and the account's credits after it (see the module's note)."""

    charged: int
    used: int  # the counter: credits used less those granted this month (may be < 0)
    plan: Plan
    period: str
    granted: int = 0
    credit_limit: int | None = None  # the limit in force (free quota or own cap)

    @property
    def quota(self) -> int:
        return quota_for(self.plan)

    @property
    def calls_used(self) -> int:
        return calls_used(self.used, self.granted)

    @property
    def state(self) -> UsageState:
        return usage_state(self.used, state_limit(self.quota, self.credit_limit))

    @property
    def resets_at(self) -> str:
        return resets_at(self.period)

    def as_meta(self) -> dict[str, Any]:
        return {
            "charged": self.charged,
            "used": self.calls_used,
            "quota": self.quota,
            "period": self.period,
            "state": self.state,
            "resetsAt": self.resets_at,
        }


def usage_meta(reading: MeterReading | None) -> dict[str, Any]:
    """The `_meta` of an answer: the reading, or only `charged: 0` for a call refused
    before it reached the meter (invalid arguments, an outage)."""
    usage = reading.as_meta() if reading is not None else {"charged": 0}
    return {USAGE_META_KEY: usage}
