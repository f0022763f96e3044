"""Who is signed in: `CurrentUser` for the JSON endpoints (401 without a valid session),
`OptionalUser` (sign-in pages) and `SignedInUser` (every other page: without a valid
session it answers a redirect to the sign-in page) for the dashboard; and the session
cookie they read."""

from __future__ import annotations

from typing import Annotated

from fastapi import Cookie, Depends, Response, Security
from fastapi.security import APIKeyCookie

from app.deps.database import SessionDep
from app.deps.session_tokens import user_for_token
from app.kit.config import get_settings
from app.kit.errors import Unauthenticated
from app.models import User

SESSION_COOKIE = "svc_session"

# The session cookie as an OpenAPI security scheme (not a parameter clients fill in);
# without it the answer is our own 401 (user_for_token), not FastAPI's.
session_cookie = APIKeyCookie(
    name=SESSION_COOKIE,
    scheme_name="session",
    description="The dashboard session, set by POST /auth/signin or /auth/signup",
    auto_error=False,
)


def set_session_cookie(response: Response, token: str) -> None:
    settings = get_settings()
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=settings.session_days * 86400,
        httponly=True,
        samesite="lax",
        secure=not settings.is_development,
        path="/",
    )


def current_user(
    session: SessionDep, svc_session: Annotated[str | None, Security(session_cookie)]
) -> User:
    return user_for_token(session, svc_session)


CurrentUser = Annotated[User, Depends(current_user)]


class SignInRequired(Exception):
    """A page needs a signed-in user; answered with a redirect to the sign-in page
    (`app.dashboard.handlers`)."""


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


def signed_in_user(user: OptionalUser) -> User:
    if user is None:
        raise SignInRequired
    return user


SignedInUser = Annotated[User, Depends(signed_in_user)]
