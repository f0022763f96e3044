from __future__ import annotations

from fastapi import APIRouter

from app.accounts.deps import CurrentUser
from app.http.deps import SessionDep
from app.metering.schemas import UsageResponse
from app.metering.service import usage_for

router = APIRouter(tags=["usage"])


@router.get("/usage")
def get_usage(session: SessionDep, user: CurrentUser) -> UsageResponse:
    """Credits used this month (UTC), the plan's quota and the derived state."""
    return usage_for(session, user.id)
