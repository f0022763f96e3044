"""Templates, their filters, and small helpers shared by the pages."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from app.billing.invoices import ZERO_DECIMAL, major_units
from app.billing.schemas import Invoice
from app.dashboard.assets import asset_url
from app.kit.clock import as_utc, period_end, period_of, period_start, utcnow
from app.kit.config import get_settings
from app.kit.validation import describe_errors

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")

SIGN_IN_PATH = "/dashboard/signin"

# Messages shown after a redirect (?notice=...); only these fixed texts are ever shown.
NOTICES = {
    "revoked": "The key was revoked. Clients using it are refused within a second.",
    "subscribed": "Payment received: you are on the standard plan.",
    "canceled": "Your subscription ends at the end of the current period.",
    "resumed": "Your subscription is resumed: it renews at the end of the period.",
    "signed_out": "You are signed out.",
    "key_gone": "That key was already revoked.",
    "key_saved": "The key is saved; a new expiry is in force on every server within a second.",
    "already_active": "Your subscription is already active.",
    "nothing_to_cancel": "There is no active subscription to cancel.",
    "nothing_to_resume": "There is no active subscription to resume.",
    "checkout_canceled": "The checkout is cancelled: its payment page no longer takes a payment.",
    "no_checkout": "There is no pending checkout to cancel.",
    "checkout_closed": (
        "That checkout can no longer be cancelled: it was paid, it expired, or a newer one "
        "replaced it. The page shows where things stand."
    ),
    "cap_set": "Your monthly credit cap is saved; it is in force within a second.",
    "cap_removed": "Your monthly credit cap is removed.",
    "app_revoked": "The app was disconnected. Its calls are refused within a second.",
    "app_gone": "That app was already disconnected.",
    "upload_gone": (
        "That upload was started already, replaced by a newer one or kept too long: "
        "upload the file again."
    ),
    "job_cancelled": (
        "The job is cancelled: rows already done are kept (and charged when they had data); "
        "no row runs after this."
    ),
    "password_reset": (
        "Your new password is set; every sign-in, API key and connected app was ended: "
        "sign in with it and make new keys."
    ),
    "password_changed": "Your password is changed; your other sign-ins were ended.",
    "email_confirmed": "Your e-mail address is confirmed: your API keys can make data calls.",
    "email_moved": "Your account now uses its new e-mail address.",
    "verification_sent": "We sent the confirmation link again: check your inbox.",
    "email_change_sent": (
        "Check the new address's inbox: the link there moves your account to it "
        "(until then it keeps this one)."
    ),
    "account_deleted": (
        "Your account is deleted: its keys no longer work and your personal data is gone."
    ),
}


def _moment(value: datetime | str) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return as_utc(value)


def readable_datetime(value: datetime | str | None) -> str:
    """23 Nov 2026, 09:40 UTC"""
    if value is None:
        return "–"
    return _moment(value).strftime("%-d %b %Y, %H:%M UTC")


def readable_time(value: datetime | str | None) -> str:
    """23 Nov 2026, 09:40:12 (the request log, where seconds matter; its page says the
    times are UTC once rather than in every row)"""
    if value is None:
        return "–"
    return _moment(value).strftime("%-d %b %Y, %H:%M:%S")


def readable_date(value: date | datetime | str | None) -> str:
    """1 Dec 2026 (a datetime is read in UTC)"""
    if value is None:
        return "–"
    if isinstance(value, datetime | str):
        value = _moment(value).date()
    return value.strftime("%-d %b %Y")


def last_day(end: datetime | str | None) -> str:
    """The last day before an exclusive period end: 2026-12-01T00:00Z -> 30 Nov 2026."""
    if end is None:
        return "–"
    return readable_date(_moment(end) - timedelta(microseconds=1))


def period_name(period: str) -> str:
    """2026-11 -> November 2026"""
    return period_start(period).strftime("%B %Y")


def number(value: int) -> str:
    return f"{value:,}"


def percent(value: float) -> str:
    """12.345 -> 12.3, 100.0 -> 100"""
    return f"{round(value, 1):g}"


STATUS_LABELS = {
    "none": "no subscription",
    "incomplete": "awaiting payment",
    "active": "active",
    "past_due": "payment past due",
    "canceled": "cancelled",
}


def status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)


def money(amount: Decimal) -> str:
    return f"{get_settings().price_currency_symbol}{amount:,.2f}"


def invoice_total(invoice: Invoice) -> str:
    """49.00 USD from Stripe (its own currency), $49.00 from the local provider."""
    if invoice.currency is None:
        return money(major_units(invoice))
    amount = major_units(invoice)
    shown = f"{amount:,.0f}" if invoice.currency in ZERO_DECIMAL else f"{amount:,.2f}"
    return f"{shown} {invoice.currency.upper()}"


templates.env.filters.update(
    readable_datetime=readable_datetime,
    readable_time=readable_time,
    readable_date=readable_date,
    last_day=last_day,
    period_name=period_name,
    number=number,
    percent=percent,
    money=money,
    invoice_total=invoice_total,
    status_label=status_label,
)
templates.env.globals["asset_url"] = asset_url


def mcp_url() -> str:
    return get_settings().base_url.rstrip("/") + "/mcp"


def prices() -> dict[str, Any]:
    """What the plans cost and include, for the pages that show prices; with the payment
    provider and this month's end, which decide what subscribing today costs (see
    `_plans.html`, "What subscribing today costs")."""
    settings = get_settings()
    return {
        "free_quota": settings.free_quota,
        "standard_quota": settings.standard_quota,
        "standard_price": settings.standard_price_monthly,
        "overage_price": settings.overage_price_per_1000,
        "provider": settings.payment_provider,
        "month_end": period_end(period_of(utcnow())),
    }


def render(request: Request, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
    notice = NOTICES.get(request.query_params.get("notice", ""))
    context.setdefault("notice", notice)
    context.setdefault("error", None)
    context.setdefault("field_errors", {})
    if context["field_errors"] and not context["error"]:
        context["error"] = "Please correct the fields marked below."
    context.setdefault("user", None)
    response = templates.TemplateResponse(request, template, context, status_code=status)
    response.headers["Cache-Control"] = "no-store"  # pages may show a key once
    return response


def to_sign_in() -> RedirectResponse:
    return RedirectResponse(SIGN_IN_PATH, status_code=303)


def redirect(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _form_wording(field: str, error: Mapping[str, Any]) -> str:
    """Form-specific wording where the shared one reads oddly under an input."""
    limits = error.get("ctx") or {}
    if field == "email" and error.get("type") != "missing":
        return "Enter a valid e-mail address, like ada@example.com."
    if error.get("type") == "string_too_short" and limits.get("min_length", 1) > 1:
        return f"Use at least {limits['min_length']} characters."
    _where, _, message = describe_errors([error]).partition(": ")
    return _sentence(message)


def field_errors(exc: ValidationError) -> dict[str, str]:
    """One message per form field (the first of each), for the input it belongs to."""
    errors: dict[str, str] = {}
    for error in exc.errors():
        field = str(error["loc"][0]) if error.get("loc") else "form"
        errors.setdefault(field, _form_wording(field, error))
    return errors


def field_error_of(message: str, fields: tuple[str, ...]) -> dict[str, str]:
    """A service's `field: message` error as a field error, when it names one of `fields`."""
    field, _, rest = message.partition(": ")
    if rest and field in fields:
        return {field: _sentence(rest)}
    return {}
