from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Security
from fastapi.security import APIKeyCookie

from app.accounts.service import user_for_token
from app.http.deps import SessionDep
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


def current_user(
    session: SessionDep, svc_session: Annotated[str | None, Security(session_cookie)]
) -> User:
    return user_for_token(session, svc_session)


CurrentUser = Annotated[User, Depends(current_user)]
