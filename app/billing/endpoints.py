from __future__ import annotations

from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Query, Request, Response
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from app.billing import invoices, service, stripe_webhooks
from app.billing.schemas import BillingPortalResponse, InvoiceList, SubscriptionResponse
from app.deps.database import SessionDep
from app.deps.users import CurrentUser
from app.http.openapi import error_responses

router = APIRouter(tags=["billing"], responses=error_responses(401))


@router.get("/subscription")
def get_subscription(user: CurrentUser, session: SessionDep) -> SubscriptionResponse:
    """The subscription; status `none` before the first checkout."""
    subscription = service.subscription_of(session, user.id)
    session.commit()  # a period end passed since the last read may have been applied
    return subscription


@router.post(
    "/subscription",
    status_code=201,
    responses={
        200: {"model": SubscriptionResponse, "description": "The checkout already pending"},
        **error_responses(403, 409, 429, 503),
    },
)
def start_subscription(
    user: CurrentUser, session: SessionDep, response: Response
) -> SubscriptionResponse:
    """Start a checkout of the standard plan: 201 with `checkoutUrl`, or 200 with the
    checkout already pending. 409 when a subscription is active."""
    subscription, created = service.start_checkout(session, user.id)
    session.commit()
    if not created:
        response.status_code = 200
    return subscription


@router.delete("/subscription", responses=error_responses(403, 404, 429, 503))
def cancel_subscription(user: CurrentUser, session: SessionDep) -> SubscriptionResponse:
    """Cancel at the end of the current period; 404 when none is active."""
    subscription = service.cancel_subscription(session, user.id)
    session.commit()
    return subscription


@router.delete("/subscription/checkout", responses=error_responses(403, 404, 409, 429, 503))
def cancel_checkout(user: CurrentUser, session: SessionDep) -> SubscriptionResponse:
    """Close the pending checkout (it can no longer be paid): status back to `none` (or
    `canceled` after an earlier subscription). 404 when none is pending; 409 when it was
    paid or has expired."""
    subscription = service.cancel_checkout(session, user.id)
    session.commit()
    return subscription


@router.get("/billing/invoices", responses=error_responses(422, 503))
def list_invoices(
    user: CurrentUser,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=invoices.MAX_INVOICES)] = 12,
) -> InvoiceList:
    """The account's latest invoices and receipts, newest first, each with its period,
    amount, status and the provider's page and PDF (Stripe: read from Stripe, cached a
    minute; local: the receipt of the subscription its checkout paid)."""
    return invoices.invoices_of(session, user.id, limit=limit)


@router.post("/billing/portal", responses=error_responses(403, 429, 503))
def open_billing_portal(user: CurrentUser) -> BillingPortalResponse:
    """Where to send the user to manage billing."""
    return BillingPortalResponse(url=service.portal_url(user.id))


@router.post("/billing/webhooks/stripe", include_in_schema=False)
async def stripe_webhook(request: Request, session: SessionDep) -> dict[str, str]:
    """Stripe's calls: no session cookie, no Origin; the signature is the authentication."""
    payload = bytearray()
    async for chunk in request.stream():
        payload += chunk
        if len(payload) > stripe_webhooks.MAX_WEBHOOK_BYTES:
            raise stripe_webhooks.PayloadTooLarge()
    event = stripe_webhooks.verified_event(bytes(payload), request.headers.get("stripe-signature"))
    outcome = await anyio.to_thread.run_sync(_apply_event, session, event)
    return {"received": outcome}


def _apply_event(session: Session, event: dict[str, Any]) -> str:
    try:
        outcome = stripe_webhooks.handle_event(session, event)
        session.commit()
    except IntegrityError:  # the same event, applied concurrently by another delivery
        session.rollback()
        return "duplicate"
    return outcome
