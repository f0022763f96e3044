"""The dashboard pages: home, subscription, billing, and the local payment provider's
checkout page (API keys: `keys_page`; usage: `usage_page`; the request log:
`calls_page`). Forms post to these routes (same-origin, so they pass the Origin check);
each calls the same services as the JSON API."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response

from app.api_keys import service as api_keys
from app.billing import invoices
from app.billing import service as billing
from app.dashboard.rendering import mcp_url, prices, redirect, render
from app.dashboard.usage_page import gauge_view
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.kit.config import get_settings
from app.kit.errors import AppError, Conflict, NotFound
from app.metering.usage import usage_for
from app.models import User

router = APIRouter(include_in_schema=False)


@router.get("/")
def home(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    return render(
        request,
        "home.html",
        user=user,
        gauge=gauge_view(usage_for(session, user.id)),
        subscription=subscription,
        key_count=sum(not api_keys.is_expired(key) for key in api_keys.list_keys(session, user.id)),
        mcp_url=mcp_url(),
    )


@router.get("/dashboard")
def dashboard_root() -> Response:
    return redirect("/")


@router.get("/dashboard/subscription")
def subscription_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    return render(
        request,
        "subscription.html",
        user=user,
        subscription=subscription,
        checkout_id=billing.pending_checkout_id(session, user.id),
        prices=prices(),
    )


@router.post("/dashboard/subscription")
def subscribe(session: SessionDep, user: SignedInUser) -> Response:
    """Start (or resume) the checkout and go pay."""
    try:
        subscription, _created = billing.start_checkout(session, user.id)
    except Conflict:
        return redirect("/dashboard/subscription?notice=already_active")
    session.commit()
    assert subscription.checkoutUrl is not None
    return redirect(subscription.checkoutUrl)


@router.post("/dashboard/subscription/checkout/cancel")
def cancel_checkout(
    session: SessionDep, user: SignedInUser, checkout_id: Annotated[str, Form(max_length=255)] = ""
) -> Response:
    """The "Cancel checkout" button of the page that showed `checkout_id`."""
    try:
        billing.cancel_checkout(session, user.id, checkout_id=checkout_id or None)
    except NotFound:
        return redirect("/dashboard/subscription?notice=no_checkout")
    except Conflict:
        return redirect("/dashboard/subscription?notice=checkout_closed")
    session.commit()
    return redirect("/dashboard/subscription?notice=checkout_canceled")


_PERIOD_END_CHANGES = {
    "cancel": (billing.cancel_subscription, "canceled", "nothing_to_cancel"),
    "resume": (billing.resume_subscription, "resumed", "nothing_to_resume"),
}


@router.post("/dashboard/subscription/{action}")
def cancel_or_resume(action: str, session: SessionDep, user: SignedInUser) -> Response:
    """Cancel at period end (the form asks first), or resume a cancelled subscription."""
    if action not in _PERIOD_END_CHANGES:
        raise NotFound()
    change, done, nothing = _PERIOD_END_CHANGES[action]
    try:
        change(session, user.id)
    except NotFound:
        return redirect(f"/dashboard/subscription?notice={nothing}")
    session.commit()
    return redirect(f"/dashboard/subscription?notice={done}")


def _billing_page(
    request: Request,
    session: SessionDep,
    user: User,
    *,
    status: int = 200,
    error: str | None = None,
) -> Response:
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    try:
        listed, invoice_error = invoices.invoices_of(session, user.id), None
    except AppError as exc:  # Stripe failing: the page still shows the rest
        listed, invoice_error = None, exc.message
    return render(
        request,
        "billing.html",
        status=status,
        error=error,
        user=user,
        subscription=subscription,
        invoices=listed,
        invoice_error=invoice_error,
        gauge=gauge_view(usage_for(session, user.id)),
        prices=prices(),
        provider=get_settings().payment_provider,
    )


@router.get("/dashboard/billing")
def billing_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    """The plan, period and usage; the local provider's billing portal, or a button to
    the payment provider's own portal."""
    return _billing_page(request, session, user)


@router.post("/dashboard/billing/portal")
def open_billing_portal(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    """To the payment provider's portal (payment method, invoices); its URL is never logged."""
    try:
        return redirect(billing.portal_url(user.id))
    except AppError as exc:
        return _billing_page(request, session, user, status=exc.status, error=exc.message)


@router.get("/billing/checkout/{checkout_id}")
def checkout_page(
    checkout_id: str, request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    """The local provider's checkout: a test-mode payment page."""
    try:
        billing.pending_checkout(session, user.id, checkout_id)
    except NotFound as exc:
        return render(request, "checkout.html", status=404, user=user, error=exc.message)
    return render(request, "checkout.html", user=user, checkout_id=checkout_id, prices=prices())


@router.post("/billing/checkout/{checkout_id}")
def complete_checkout(
    checkout_id: str, request: Request, session: SessionDep, user: SignedInUser
) -> Response:
    """The "Pay" button. Paying twice (a double submit) is a no-op."""
    try:
        billing.complete_checkout(session, user.id, checkout_id)
    except AppError as exc:
        return render(request, "checkout.html", status=exc.status, user=user, error=exc.message)
    session.commit()
    return redirect("/dashboard/subscription?notice=subscribed")
