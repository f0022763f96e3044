"""Dashboard sessions by their cookie token: only the token's SHA-256 is stored, so a
database dump does not yield usable cookies. No web framework here: accounts' service
(and so the workers) import it."""

from __future__ import annotations

import hashlib

from sqlmodel import Session, col, select

from app.kit.clock import as_utc, utcnow
from app.kit.errors import Unauthenticated
from app.models import AuthSession, User


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def user_for_token(session: Session, token: str | None) -> User:
    if not token:
        raise Unauthenticated("Sign in first: this endpoint needs the svc_session cookie")
    # One statement, so the session and the account (its generation: see
    # app/account_lock.py) are read as of one moment, never across a reset.
    found = session.exec(
        select(AuthSession, User)
        .join(User, col(User.id) == col(AuthSession.user_id))
        .where(AuthSession.token_hash == hash_token(token))
    ).first()
    if found is None or as_utc(found[0].expires_at) <= utcnow():
        raise Unauthenticated("Session expired or signed out; sign in again")
    return found[1]
