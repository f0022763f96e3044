from __future__ import annotations

from typing import Annotated

from fastapi import Cookie, Depends

from app.accounts.service import user_for_token
from app.http.deps import SessionDep
from app.models import User

SESSION_COOKIE = "svc_session"


def current_user(session: SessionDep, svc_session: Annotated[str | None, Cookie()] = None) -> User:
    return user_for_token(session, svc_session)


CurrentUser = Annotated[User, Depends(current_user)]
