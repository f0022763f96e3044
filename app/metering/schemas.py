from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

UsageState = Literal["ok", "warning", "over"]


# The largest monthly credit cap an account may set (far above any real month).
MAX_CREDIT_CAP = 1_000_000_000


class UsageLimits(BaseModel):
    """The plan's tenant limits (refusals: RATE_LIMITED, retryable, never charged)."""

    ratePerSecond: float = Field(description="Calls per second per API key (token bucket)")
    burst: int = Field(description="Calls an API key may make at once after a quiet spell")
    accountRatePerSecond: float = Field(description="Calls per second of all the account's keys")
    accountBurst: int
    concurrency: int = Field(description="Calls of the account in progress at once")
    heavyMapPixels: int = Field(
        description="A static_map above this many pixels takes one rate token per this many"
    )


class TestUsage(BaseModel):
    """The month's calls of the account's test-mode keys (svc_test_ak_): apart from
    live credits, never billed, never against the quota or the account's cap."""

    period: str = Field(description="Calendar month in UTC, YYYY-MM")
    used: int = Field(description="Calls the account's test keys made in the period")
    limit: int = Field(description="Test calls a month, past which test keys are refused")
    remaining: int = Field(description="Test calls left in the period")


class UsageResponse(BaseModel):
    period: str = Field(description="Calendar month in UTC, YYYY-MM")
    used: int = Field(description="Credits the period's calls consumed (never negative)")
    granted: int = Field(description="Credits an operator granted for the period")
    quota: int = Field(description="Monthly credit allotment of the plan")
    remaining: int = Field(
        description="Credits left before calls are refused (quota or creditCap, whichever "
        "is lower, plus granted, less used); without a limit (standard plan, no cap), left "
        "of the monthly allotment (past it is overage)"
    )
    percent: float = Field(
        description="used as a percentage of quota plus granted, rounded to 2 decimals"
    )
    state: UsageState
    mode: Literal["free", "standard"] = Field(description="The account's plan")
    limits: UsageLimits
    creditCap: int | None = Field(
        description="The account's own monthly credit cap (calls past it are refused with "
        "QUOTA_EXCEEDED); null: none"
    )
    test: TestUsage | None = Field(
        None, description="Test-mode keys' calls, counted apart and never billed"
    )


class CreditCapRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cap: int | None = Field(
        strict=True,
        ge=1,
        le=MAX_CREDIT_CAP,
        description="Credits a month past which calls are refused; null removes the cap",
    )

    @field_validator("cap", mode="before")
    @classmethod
    def _integral_number(cls, value: object) -> object:
        """5000.0 is the integer 5000 in JSON (and in JSON Schema); 1.5 and "5000" stay
        refused by the strict check."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


class CreditCapResponse(BaseModel):
    creditCap: int | None


class UsageEventIn(BaseModel):
    """One successful call, as the billing task receives it (JSON over the broker)."""

    model_config = ConfigDict(extra="forbid")

    call_id: str = Field(min_length=1, max_length=64)
    user_id: str = Field(min_length=1, max_length=40)
    key_id: str | None = Field(default=None, max_length=32)
    tool: str = Field(min_length=1, max_length=64)
    credits: int = Field(default=1, ge=0)
    period: str = Field(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")
    created_at: datetime
