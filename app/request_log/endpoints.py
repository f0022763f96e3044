from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.deps.database import SessionDep
from app.deps.users import CurrentUser
from app.http.openapi import error_responses
from app.request_log.pages import CURSOR_PATTERN
from app.request_log.schemas import (
    MAX_LIMIT,
    OUTCOME_PATTERN,
    PRINCIPAL_ID_PATTERN,
    TOOL_PATTERN,
    CallLogResponse,
)
from app.request_log.service import CallQuery, call_log

router = APIRouter(tags=["usage"], responses=error_responses(401))


@router.get("/usage/calls")
def get_calls(
    session: SessionDep,
    user: CurrentUser,
    principal: Annotated[str | None, Query(pattern=PRINCIPAL_ID_PATTERN)] = None,
    outcome: Annotated[str | None, Query(pattern=OUTCOME_PATTERN)] = None,
    tool: Annotated[str | None, Query(pattern=TOOL_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    before: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
    after: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
) -> CallLogResponse:
    """The account's latest calls, failed ones included (the last 1,000 or 7 days,
    whichever is smaller), newest first: `principal` (a keyId) keeps one key's calls, `tool`
    one tool's, `outcome` one outcome (`OK`, an error code such as `QUOTA_EXCEEDED`, or
    `ERROR` for every failure). Pages of `limit`: `before=<nextCursor>` is the next (older)
    page, `after=<prevCursor>` the previous one. No arguments or results are kept."""
    query = CallQuery(principal, outcome, tool, limit, before, after)
    return call_log(session, user.id, query)
