"""The request log page: the account's latest calls, failed ones included, filtered by key
(or connected app) and outcome (a GET form, so a filtered view is a link). Reads what
`GET /usage/calls` answers (`app.request_log`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from sqlmodel import col, select

from app.dashboard.rendering import render
from app.deps.database import SessionDep
from app.deps.users import SignedInUser
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.models import ApiKey, OAuthClient, OAuthGrant
from app.request_log.schemas import MAX_LIMIT, OUTCOME_PATTERN, PRINCIPAL_ID_PATTERN
from app.request_log.service import FAILED, OK, call_log

router = APIRouter(include_in_schema=False)

PAGE_ROWS = 100
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


@router.get("/dashboard/calls")
def calls_page(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    principal: Annotated[str, Query(max_length=32)] = "",
    outcome: Annotated[str, Query(max_length=32)] = "",
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = PAGE_ROWS,
) -> Response:
    """Unknown filter values (an edited URL) show every call rather than an error page."""
    wanted_key = principal if re.fullmatch(PRINCIPAL_ID_PATTERN, principal) else None
    wanted_outcome = outcome.upper() if re.fullmatch(OUTCOME_PATTERN, outcome) else None
    log = call_log(session, user.id, principal=wanted_key, outcome=wanted_outcome, limit=limit)
    settings = get_settings()
    return render(
        request,
        "calls.html",
        user=user,
        log=log,
        keys=principal_choices(session, user.id),
        outcomes=OUTCOMES,
        principal=wanted_key or "",
        outcome=wanted_outcome or "",
        limit=limit,
        max_limit=MAX_LIMIT,
        retention_calls=settings.request_log_max_calls,
        retention_days=settings.request_log_days,
    )
