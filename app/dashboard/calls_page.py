"""The request log page: the account's latest calls, failed ones included, filtered by key
(or connected app), tool and outcome (a GET form, so a filtered view is a link), a page
of `PAGE_ROWS` at a time with links to the newer and older pages (cursors, as
`GET /usage/calls` pages: `app.request_log.pages`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response
from sqlmodel import col, select

from app.dashboard.rendering import render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.models import ApiKey, OAuthClient, OAuthGrant
from app.request_log.pages import CURSOR_PATTERN
from app.request_log.schemas import OUTCOME_PATTERN, PRINCIPAL_ID_PATTERN, TOOL_PATTERN
from app.request_log.service import FAILED, OK, CallQuery, as_response

router = APIRouter(include_in_schema=False)

PAGE_ROWS = 25  # a page stays a few screens long on a phone
MAX_PAGE_ROWS = 100
# The outcome filter's choices: every code a call can end with.
OUTCOMES = [
    (OK, "OK"),
    (FAILED, "Failed (any error)"),
    *(
        (code, code)
        for code in (
            "INVALID_ARGUMENT", "NOT_FOUND", "UNSUPPORTED", "QUOTA_EXCEEDED", "RATE_LIMITED",
            "UPSTREAM_UNAVAILABLE", "DEADLINE_EXCEEDED", "UNAVAILABLE", "INTERNAL", "CANCELLED",
        )
    ),
]  # fmt: skip


@dataclass(frozen=True)
class Choice:
    id: str
    label: str


def principal_choices(session: SessionDep, user_id: str) -> list[Choice]:
    """Keys and connected apps that can have calls in the log: not revoked, or revoked
    within its retention."""
    since = utcnow() - timedelta(days=get_settings().request_log_days)
    revoked_at = col(ApiKey.revoked_at)
    keys = session.exec(
        select(ApiKey)
        .where(col(ApiKey.user_id) == user_id, revoked_at.is_(None) | (revoked_at >= since))
        .order_by(col(ApiKey.created_at).desc())
    )
    disconnected = col(OAuthGrant.revoked_at)
    apps = session.exec(
        select(OAuthGrant.id, OAuthClient.client_name, OAuthGrant.revoked_at)
        .join(OAuthClient, col(OAuthClient.client_id) == col(OAuthGrant.client_id))
        .where(
            col(OAuthGrant.user_id) == user_id,
            disconnected.is_(None) | (disconnected >= since),
        )
        .order_by(col(OAuthGrant.created_at).desc())
    )
    return [
        *(Choice(k.key_id, k.name + (" (revoked)" if k.revoked_at else "")) for k in keys),
        *(Choice(i, f"app: {name}" + (" (disconnected)" if at else "")) for i, name, at in apps),
    ]


def _valid(value: str, pattern: str) -> str | None:
    return value if re.fullmatch(pattern, value) else None


@router.get("/dashboard/calls")
def calls_page(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    principal: Annotated[str, Query(max_length=32)] = "",
    outcome: Annotated[str, Query(max_length=32)] = "",
    tool: Annotated[str, Query(max_length=64)] = "",
    before: Annotated[str, Query(max_length=32)] = "",
    after: Annotated[str, Query(max_length=32)] = "",
    limit: Annotated[int, Query(ge=1)] = PAGE_ROWS,
) -> Response:
    """Unknown filter values or cursors (an edited URL) show every call from the newest
    rather than an error page; `limit` above `MAX_PAGE_ROWS` is cut to it."""
    wanted_outcome = outcome.upper() if _valid(outcome, OUTCOME_PATTERN) else None
    filters = CallQuery(
        principal=_valid(principal, PRINCIPAL_ID_PATTERN),
        outcome=wanted_outcome,
        tool=_valid(tool, TOOL_PATTERN),
        limit=min(limit, MAX_PAGE_ROWS),
    )
    older, newer = _valid(before, CURSOR_PATTERN), _valid(after, CURSOR_PATTERN)
    query = replace(filters, before=older, after=None if older else newer)
    found = query.read(user.id)
    log = as_response(session, user.id, found)
    settings = get_settings()
    return render(
        request,
        "calls.html",
        user=user,
        log=log,
        keys=principal_choices(session, user.id),
        outcomes=OUTCOMES,
        tools=found.tools,
        principal=filters.principal or "",
        outcome=wanted_outcome or "",
        tool=filters.tool or "",
        older_url=_page_url(filters, before=log.nextCursor),
        newer_url=_page_url(filters, after=log.prevCursor),
        retention_calls=settings.request_log_max_calls,
        retention_days=settings.request_log_days,
    )


def _page_url(filters: CallQuery, **cursor: str | None) -> str | None:
    """The link to another page with the same filters; None when there is none."""
    if not any(cursor.values()):
        return None
    params = {
        "principal": filters.principal,
        "tool": filters.tool,
        "outcome": filters.outcome,
        "limit": filters.limit if filters.limit != PAGE_ROWS else None,
        **cursor,
    }
    return "/dashboard/calls?" + urlencode({k: v for k, v in params.items() if v})
