"""The dashboard pages: home (usage), API keys, subscription, billing, and the local
payment provider's checkout page. Forms post to these routes (same-origin, so they pass
the Origin check); each calls the same services as the JSON API."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response

from app.api_keys import service as api_keys
from app.billing import service as billing
from app.billing.plans import Plan, quota_for
from app.dashboard.rendering import OptionalUser, redirect, render, to_sign_in
from app.errors import AppError, Conflict, NotFound
from app.http.deps import SessionDep
from app.metering.service import usage_for
from app.models import User

router = APIRouter(include_in_schema=False)


def _keys_page(
    request: Request,
    session: SessionDep,
    user: User,
    *,
    status: int = 200,
    error: str | None = None,
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
        error=error,
        created=created,
        name=name,
    )


@router.get("/")
def home(request: Request, session: SessionDep, user: OptionalUser) -> Response:
    if user is None:
        return to_sign_in()
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    usage = usage_for(session, user.id)
    return render(
        request,
        "home.html",
        user=user,
        usage=usage,
        subscription=subscription,
        key_count=len(api_keys.list_keys(session, user.id)),
    )


@router.get("/dashboard")
def dashboard_root() -> Response:
    return redirect("/")


@router.get("/dashboard/keys")
def keys_page(request: Request, session: SessionDep, user: OptionalUser) -> Response:
    if user is None:
        return to_sign_in()
    return _keys_page(request, session, user)


@router.post("/dashboard/keys")
def create_key(
    request: Request,
    session: SessionDep,
    user: OptionalUser,
    name: Annotated[str, Form()] = "",
) -> Response:
    """Creates a key and shows its plaintext in this response only (no redirect, so the
    plaintext never lands in a URL or the history)."""
    if user is None:
        return to_sign_in()
    try:
        key, plaintext = api_keys.create_key(session, user.id, name)
    except AppError as exc:
        session.rollback()
        return _keys_page(request, session, user, status=exc.status, error=exc.message, name=name)
    session.commit()
    return _keys_page(request, session, user, status=201, created=(key.name, plaintext))


@router.post("/dashboard/keys/{key_id}/revoke")
def revoke_key(key_id: str, session: SessionDep, user: OptionalUser) -> Response:
    if user is None:
        return to_sign_in()
    try:
        api_keys.revoke_key(session, user.id, key_id)
    except NotFound:  # a second click, or another tab revoked it first
        return redirect("/dashboard/keys?notice=key_gone")
    session.commit()
    return redirect("/dashboard/keys?notice=revoked")


@router.get("/dashboard/subscription")
def subscription_page(request: Request, session: SessionDep, user: OptionalUser) -> Response:
    if user is None:
        return to_sign_in()
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    return render(
        request,
        "subscription.html",
        user=user,
        subscription=subscription,
        standard_quota=quota_for(Plan.STANDARD),
    )


@router.post("/dashboard/subscription")
def subscribe(session: SessionDep, user: OptionalUser) -> Response:
    """Start (or resume) the checkout and go pay."""
    if user is None:
        return to_sign_in()
    try:
        subscription, _created = billing.start_checkout(session, user.id)
    except Conflict:
        return redirect("/dashboard/subscription?notice=already_active")
    session.commit()
    assert subscription.checkoutUrl is not None
    return redirect(subscription.checkoutUrl)


@router.post("/dashboard/subscription/cancel")
def cancel(session: SessionDep, user: OptionalUser) -> Response:
    if user is None:
        return to_sign_in()
    try:
        billing.cancel_subscription(session, user.id)
    except NotFound:
        return redirect("/dashboard/subscription?notice=nothing_to_cancel")
    session.commit()
    return redirect("/dashboard/subscription?notice=canceled")


@router.get("/dashboard/billing")
def billing_page(request: Request, session: SessionDep, user: OptionalUser) -> Response:
    """The local provider's billing portal."""
    if user is None:
        return to_sign_in()
    subscription = billing.subscription_of(session, user.id)
    session.commit()
    return render(
        request,
        "billing.html",
        user=user,
        subscription=subscription,
        usage=usage_for(session, user.id),
    )


@router.get("/billing/checkout/{checkout_id}")
def checkout_page(
    checkout_id: str, request: Request, session: SessionDep, user: OptionalUser
) -> Response:
    """The local provider's checkout: a test-mode payment page."""
    if user is None:
        return to_sign_in()
    try:
        billing.pending_checkout(session, user.id, checkout_id)
    except NotFound as exc:
        return render(request, "checkout.html", status=404, user=user, error=exc.message)
    return render(
        request,
        "checkout.html",
        user=user,
        checkout_id=checkout_id,
        standard_quota=quota_for(Plan.STANDARD),
    )


@router.post("/billing/checkout/{checkout_id}")
def complete_checkout(
    checkout_id: str, request: Request, session: SessionDep, user: OptionalUser
) -> Response:
    """The "Pay" button. Paying twice (a double submit) is a no-op."""
    if user is None:
        return to_sign_in()
    try:
        billing.complete_checkout(session, user.id, checkout_id)
    except AppError as exc:
        return render(request, "checkout.html", status=exc.status, user=user, error=exc.message)
    session.commit()
    return redirect("/dashboard/subscription?notice=subscribed")
