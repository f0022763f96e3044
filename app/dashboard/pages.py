"""The dashboard pages: home, API keys, subscription, billing, and the local payment
provider's checkout page. Forms post to these routes (same-origin, so they pass the
Origin check); each calls the same services as the JSON API."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response

from app.api_keys import service as api_keys
from app.billing import service as billing
from app.config import get_settings
from app.dashboard.deps import SignedInUser
from app.dashboard.rendering import field_error_of, prices, redirect, render
from app.dashboard.usage_page import gauge_view
from app.errors import AppError, Conflict, NotFound
from app.http.deps import SessionDep
from app.metering.reports import last_used_by_key
from app.metering.service import usage_for
from app.models import User

router = APIRouter(include_in_schema=False)


def mcp_url() -> str:
    return get_settings().base_url.rstrip("/") + "/mcp"


def client_config(plaintext: str) -> str:
    """The README's MCP client configuration (remote server with a header), key filled in."""
    server = {"type": "http", "url": mcp_url(), "headers": {"Authorization": f"Bearer {plaintext}"}}
    return json.dumps({"mcpServers": {"geosvc": server}}, indent=2)


def curl_example(plaintext: str) -> str:
    """A first call of the HTTP API (README, "HTTP API"), key filled in."""
    base = get_settings().base_url.rstrip("/")
    return (
        f'curl -s "{base}/v1/geocode?query=Austin,%20TX&limit=1" \\\n'
        f'  -H "Authorization: Bearer {plaintext}"'
    )


def _keys_page(
    request: Request,
    session: SessionDep,
    user: User,
    *,
    status: int = 200,
    error: str | None = None,
    field_errors: dict[str, str] | None = None,
    created: tuple[str, str] | None = None,
    name: str = "",
) -> Response:
    keys = [api_keys.to_record(key) for key in api_keys.list_keys(session, user.id)]
    return render(
        request,
        "keys.html",
        status=status,
        user=user,
        keys=keys,
        last_used=last_used_by_key(session, user.id),
        error=error,
        field_errors=field_errors or {},
        created=created,
        config=client_config(created[1]) if created else None,
        curl=curl_example(created[1]) if created else None,
        mcp_url=mcp_url(),
        name=name,
    )


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
        key_count=len(api_keys.list_keys(session, user.id)),
        mcp_url=mcp_url(),
    )


@router.get("/dashboard")
def dashboard_root() -> Response:
    return redirect("/")


@router.get("/dashboard/keys")
def keys_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return _keys_page(request, session, user)


@router.post("/dashboard/keys")
def create_key(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    name: Annotated[str, Form()] = "",
) -> Response:
    """Creates a key and shows its plaintext in this response only (no redirect, so the
    plaintext never lands in a URL or the history)."""
    try:
        key, plaintext = api_keys.create_key(session, user.id, name)
    except AppError as exc:
        session.rollback()
        on_field = field_error_of(exc.message, ("name",))
        return _keys_page(
            request,
            session,
            user,
            status=exc.status,
            error=None if on_field else exc.message,
            field_errors=on_field,
            name=name,
        )
    session.commit()
    return _keys_page(request, session, user, status=201, created=(key.name, plaintext))


@router.post("/dashboard/keys/{key_id}/revoke")
def revoke_key(key_id: str, session: SessionDep, user: SignedInUser) -> Response:
    try:
        api_keys.revoke_key(session, user.id, key_id)
    except NotFound:  # a second click, or another tab revoked it first
        return redirect("/dashboard/keys?notice=key_gone")
    session.commit()
    return redirect("/dashboard/keys?notice=revoked")


@router.get("/dashboard/subscription")
def subscription_page(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    return render(
        request, "subscription.html", user=user, subscription=subscription, prices=prices()
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
    return render(
        request,
        "billing.html",
        status=status,
        error=error,
        user=user,
        subscription=subscription,
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
