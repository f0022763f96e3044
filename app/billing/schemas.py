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


InvoiceStatus = Literal["open", "paid", "uncollectible", "void"]


class Invoice(BaseModel):
    id: str = Field(description="The provider's invoice id (`in_...` at Stripe)")
    number: str | None = Field(description="The number printed on it; null when it has none")
    status: InvoiceStatus = Field(description="`paid`: a receipt; `open`: still due")
    total: int = Field(description="In the currency's smallest unit (cents), as Stripe")
    amountPaid: int = Field(description="Paid so far, in the same unit")
    currency: str | None = Field(
        description="ISO 4217, lowercase; null from the local provider (its prices are in "
        "GEOSVC_PRICE_CURRENCY_SYMBOL)"
    )
    periodStart: str | None = Field(description="The service period it bills, ISO 8601 UTC")
    periodEnd: str | None
    createdAt: str
    hostedUrl: str | None = Field(
        description="The provider's page of the invoice or receipt; null when it has none"
    )
    pdfUrl: str | None = Field(description="Its PDF; null when there is none")


class InvoiceList(BaseModel):
    invoices: list[Invoice] = Field(description="Newest first (drafts left out)")
    hasMore: bool = Field(description="Older ones exist: the billing portal lists them all")
    provider: str = Field(description="`local` (test mode: nothing charged) or `stripe`")
