from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

UsageState = Literal["ok", "warning", "over"]


class UsageResponse(BaseModel):
    period: str = Field(description="Calendar month in UTC, YYYY-MM")
    used: int = Field(description="Credits consumed in the period")
    quota: int = Field(description="Monthly credit allotment of the plan")
    percent: float = Field(description="used as a percentage of quota, rounded to 2 decimals")
    state: UsageState
    mode: Literal["free", "standard"] = Field(description="The account's plan")


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
