from __future__ import annotations

from fastapi import APIRouter, Response

from app.accounts.deps import CurrentUser
from app.billing import service
from app.billing.schemas import BillingPortalResponse, SubscriptionResponse
from app.http.deps import SessionDep

router = APIRouter(tags=["billing"])


@router.get("/subscription")
def get_subscription(user: CurrentUser, session: SessionDep) -> SubscriptionResponse:
    """The subscription; status `none` before the first checkout."""
    subscription = service.subscription_of(session, user.id)
    session.commit()  # a period end passed since the last read may have been applied
    return subscription


@router.post("/subscription", status_code=201)
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


@router.delete("/subscription")
def cancel_subscription(user: CurrentUser, session: SessionDep) -> SubscriptionResponse:
    """Cancel at the end of the current period; 404 when none is active."""
    subscription = service.cancel_subscription(session, user.id)
    session.commit()
    return subscription


@router.post("/billing/portal")
def open_billing_portal(user: CurrentUser) -> BillingPortalResponse:
    """Where to send the user to manage billing."""
    return BillingPortalResponse(url=service.portal_url(user.id))
