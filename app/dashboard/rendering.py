"""Templates, the optional signed-in user, and small helpers shared by the pages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import Cookie, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

from app.accounts.deps import SESSION_COOKIE
from app.accounts.service import user_for_token
from app.errors import Unauthenticated
from app.http.deps import SessionDep
from app.models import User

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")

SIGN_IN_PATH = "/dashboard/signin"

# Messages shown after a redirect (?notice=...); only these fixed texts are ever shown.
NOTICES = {
    "revoked": "The key was revoked. Clients using it are refused within a second.",
    "subscribed": "Payment received: you are on the standard plan.",
    "canceled": "Your subscription ends at the end of the current period.",
    "signed_out": "You are signed out.",
    "key_gone": "That key was already revoked.",
    "already_active": "Your subscription is already active.",
    "nothing_to_cancel": "There is no active subscription to cancel.",
}


def optional_user(
    session: SessionDep,
    svc_session: Annotated[str | None, Cookie(alias=SESSION_COOKIE)] = None,
) -> User | None:
    if not svc_session:
        return None
    try:
        return user_for_token(session, svc_session)
    except Unauthenticated:
        return None


OptionalUser = Annotated[User | None, Depends(optional_user)]


def render(request: Request, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
    notice = NOTICES.get(request.query_params.get("notice", ""))
    context.setdefault("notice", notice)
    context.setdefault("error", None)
    response = templates.TemplateResponse(request, template, context, status_code=status)
    response.headers["Cache-Control"] = "no-store"  # pages may show a key once
    return response


def to_sign_in() -> RedirectResponse:
    return RedirectResponse(SIGN_IN_PATH, status_code=303)


def redirect(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)
