from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.deps.database import SessionDep
from app.deps.users import CurrentUser
from app.http.openapi import error_responses
from app.request_log.schemas import (
    MAX_LIMIT,
    OUTCOME_PATTERN,
    PRINCIPAL_ID_PATTERN,
    CallLogResponse,
)
from app.request_log.service import call_log

router = APIRouter(tags=["usage"], responses=error_responses(401))


@router.get("/usage/calls")
def get_calls(
    session: SessionDep,
    user: CurrentUser,
    principal: Annotated[str | None, Query(pattern=PRINCIPAL_ID_PATTERN)] = None,
    outcome: Annotated[str | None, Query(pattern=OUTCOME_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
) -> CallLogResponse:
    """The account's latest calls, failed ones included (the last 1,000 or 7 days,
    whichever is smaller), newest first: `principal` (a keyId) keeps one key's calls, `outcome` one
    outcome (`OK`, an error code such as `QUOTA_EXCEEDED`, or `ERROR` for every failure).
    No arguments or results are kept."""
    return call_log(session, user.id, principal=principal, outcome=outcome, limit=limit)
