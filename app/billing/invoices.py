"""The account's invoices and receipts, as its payment provider keeps them.

- `stripe`: `GET /v1/invoices?customer=...` through the Stripe client (its timeout,
  retries and circuit breaker), drafts left out, newest first. Reads would otherwise call
  Stripe on every page view, so an account's list is kept in Redis for
  `CACHE_TTL_S` (a reload loop costs one Stripe call a minute; an unreadable cache just
  asks Stripe). An account that never reached Stripe (no customer) has none, unasked.
- `local` (development) takes no money and keeps no documents: what it records is the
  subscription its checkout paid, so the list is that one receipt, for the current (or
  last) period, paid, at the configured price, with no document to link to. A plan an
  operator set (`geosvc admin`) was not paid and shows nothing.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

import redis
from sqlmodel import Session

from app.billing.schemas import Invoice, InvoiceList
from app.kit.clock import iso_ms
from app.kit.config import get_settings
from app.kit.redis_client import sync_redis
from app.models import StripeCustomer
from app.plans import get_subscription

logger = logging.getLogger(__name__)

MAX_INVOICES = 24  # read from Stripe at once (and cached); a page shows at most this many
CACHE_TTL_S = 60
LOCAL_CHECKOUT_PREFIX = "chk_"  # provider_ref of a subscription a local checkout paid


def invoices_of(session: Session, user_id: str, *, limit: int = 12) -> InvoiceList:
    """The account's latest invoices, newest first (at most `limit` of MAX_INVOICES)."""
    subscription = get_subscription(session, user_id)
    provider = subscription.provider if subscription else get_settings().payment_provider
    if provider == "stripe":
        found, has_more = _stripe_invoices(session, user_id)
    else:
        found, has_more = _local_receipts(session, user_id), False
    return InvoiceList(
        invoices=found[:limit], hasMore=has_more or len(found) > limit, provider=provider
    )


def _local_receipts(session: Session, user_id: str) -> list[Invoice]:
    subscription = get_subscription(session, user_id)
    if (
        subscription is None
        or subscription.provider != "local"
        or not (subscription.provider_ref or "").startswith(LOCAL_CHECKOUT_PREFIX)
        or subscription.current_period_start is None
    ):
        return []
    start, end = subscription.current_period_start, subscription.current_period_end
    cents = int(get_settings().standard_price_monthly * 100)
    return [
        Invoice(
            id=f"{subscription.provider_ref}-{start:%Y-%m}",
            number=None,
            status="paid",
            total=cents,
            amountPaid=cents,
            currency=None,
            periodStart=iso_ms(start),
            periodEnd=iso_ms(end) if end else None,
            createdAt=iso_ms(start),
            hostedUrl=None,
            pdfUrl=None,
        )
    ]


def cache_key(user_id: str) -> str:
    return f"{get_settings().redis_key_prefix}billing:invoices:{{{user_id}}}"


def _stripe_invoices(session: Session, user_id: str) -> tuple[list[Invoice], bool]:
    customer = session.get(StripeCustomer, user_id)
    if customer is None:
        return [], False
    cached = _cached(user_id)
    if cached is not None:
        return cached
    from app.billing.stripe_provider import StripeProvider  # the library loads on use

    listed = StripeProvider().list_invoices(customer.customer_id, MAX_INVOICES)
    found = [from_stripe(obj) for obj in listed["data"] if obj.get("status") != "draft"]
    has_more = bool(listed.get("has_more"))
    try:
        body = json.dumps({"invoices": [i.model_dump() for i in found], "hasMore": has_more})
        sync_redis().set(cache_key(user_id), body, ex=CACHE_TTL_S)
    except redis.RedisError as exc:
        logger.warning("invoice cache not written: %s", exc)
    return found, has_more


def _cached(user_id: str) -> tuple[list[Invoice], bool] | None:
    try:
        raw = cast(str | None, sync_redis().get(cache_key(user_id)))
        if raw is None:
            return None
        body = json.loads(raw)
        return [Invoice.model_validate(i) for i in body["invoices"]], bool(body["hasMore"])
    except (redis.RedisError, ValueError, KeyError, TypeError) as exc:
        logger.warning("invoice cache unreadable, asking Stripe: %s", exc)
        return None


def forget(user_id: str) -> None:
    """Drop the cached list (a payment or a new invoice was just announced)."""
    try:
        sync_redis().delete(cache_key(user_id))
    except redis.RedisError as exc:
        logger.warning("invoice cache not cleared: %s", exc)


def _moment(value: Any) -> str | None:
    return iso_ms(datetime.fromtimestamp(int(value), UTC)) if value else None


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None


def from_stripe(obj: dict[str, Any]) -> Invoice:
    """Our record of a Stripe invoice object. The period is its lines' service period
    (an invoice's own period_start/end is when its items were added), else its own."""
    lines = (obj.get("lines") or {}).get("data") or []
    periods = [line.get("period") or {} for line in lines if isinstance(line, dict)]
    starts = [p["start"] for p in periods if p.get("start")]
    ends = [p["end"] for p in periods if p.get("end")]
    status = str(obj.get("status") or "open")
    return Invoice(
        id=str(obj["id"]),
        number=_text(obj.get("number")),
        status=status if status in ("open", "paid", "uncollectible", "void") else "open",
        total=int(obj.get("total") or 0),
        amountPaid=int(obj.get("amount_paid") or 0),
        currency=_text(obj.get("currency")),
        periodStart=_moment(min(starts) if starts else obj.get("period_start")),
        periodEnd=_moment(max(ends) if ends else obj.get("period_end")),
        createdAt=_moment(obj.get("created")) or iso_ms(datetime.now(UTC)),
        hostedUrl=_text(obj.get("hosted_invoice_url")),
        pdfUrl=_text(obj.get("invoice_pdf")),
    )


# Stripe's zero-decimal currencies: amounts are whole units, not hundredths.
ZERO_DECIMAL = frozenset("bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf".split())


def major_units(invoice: Invoice) -> Decimal:
    """The total in the currency's own units (49.00, not 4900)."""
    if invoice.currency in ZERO_DECIMAL:
        return Decimal(invoice.total)
    return Decimal(invoice.total) / 100
