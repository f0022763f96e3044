"""Who is signed in, for the pages: `OptionalUser` (sign-in pages) and `SignedInUser`
(every other page: without a valid session it answers a redirect to the sign-in page)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Cookie, Depends

from app.accounts.deps import SESSION_COOKIE
from app.accounts.service import user_for_token
from app.errors import Unauthenticated
from app.http.deps import SessionDep
from app.models import User


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
