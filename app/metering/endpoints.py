from __future__ import annotations

from fastapi import APIRouter

from app.deps.database import SessionDep
from app.deps.users import CurrentUser
from app.http.openapi import error_responses
from app.metering.schemas import CreditCapRequest, CreditCapResponse, UsageResponse
from app.metering.usage import credit_cap_of, set_credit_cap, usage_for

router = APIRouter(tags=["usage"], responses=error_responses(401))


@router.get("/usage")
def get_usage(session: SessionDep, user: CurrentUser) -> UsageResponse:
    """Credits used this month (UTC), the plan's quota and the derived state, the plan's
    rate and concurrency limits, and the account's own credit cap."""
    return usage_for(session, user.id)


@router.put("/usage/cap", responses=error_responses(403))
def put_credit_cap(
    body: CreditCapRequest, session: SessionDep, user: CurrentUser
) -> CreditCapResponse:
    """Set (or, with `null`, remove) the account's monthly credit cap: calls that would
    take the month past it are refused with QUOTA_EXCEEDED instead of billed."""
    set_credit_cap(session, user.id, body.cap)
    session.commit()
    return CreditCapResponse(creditCap=credit_cap_of(session, user.id))
