from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

SubscriptionStatus = Literal["none", "incomplete", "active", "past_due", "canceled"]


class SubscriptionResponse(BaseModel):
    plan: Literal["free", "standard"] = Field(description="The plan in force now")
    status: SubscriptionStatus
    currentPeriodStart: str | None = Field(description="ISO 8601 UTC; null before any period")
    currentPeriodEnd: str | None = Field(description="Exclusive end of the current period")
    cancelAtPeriodEnd: bool
    checkoutUrl: str | None = Field(description="Where to pay, while a checkout is pending")


class BillingPortalResponse(BaseModel):
    url: str
