"""Accounts and dashboard sessions.

The session cookie carries a random 256-bit token; only its SHA-256 is stored, so a
database dump does not yield usable cookies.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

import redis
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from app.accounts.schemas import Entitlements, MeResponse, UserObject
from app.billing.service import has_subscription
from app.clock import as_utc, utcnow
from app.config import get_settings
from app.errors import Conflict, RateLimited, Unauthenticated
from app.ids import new_user_id
from app.models import AuthSession, User

_hasher = PasswordHasher()
# Verified against when the e-mail is unknown, so both failures take the same time.
_DUMMY_HASH = _hasher.hash("not-a-real-password")


def normalise_email(email: str) -> str:
    return email.strip().lower()


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_user(session: Session, *, email: str, password: str, name: str | None = None) -> User:
    email = normalise_email(email)
    if session.exec(select(User).where(User.email == email)).first() is not None:
        raise Conflict("An account with this e-mail already exists")
    user = User(id=new_user_id(), email=email, name=name, password_hash=_hasher.hash(password))
    session.add(user)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent sign-up with the same e-mail won
        session.rollback()
        raise Conflict("An account with this e-mail already exists") from exc
    return user


def set_password(user: User, password: str) -> None:
    user.password_hash = _hasher.hash(password)


def _failures_key(email: str) -> str:
    return f"signin_failures:{hashlib.sha256(email.encode()).hexdigest()[:32]}"


def authenticate(session: Session, store: redis.Redis, *, email: str, password: str) -> User:
    """Check credentials, throttling repeated failures for one e-mail."""
    settings = get_settings()
    email = normalise_email(email)
    failures_key = _failures_key(email)
    failures = int(str(store.get(failures_key) or 0))
    if failures >= settings.signin_max_failures:
        raise RateLimited("Too many failed sign-ins for this e-mail; try again later")
    user = session.exec(select(User).where(User.email == email)).first()
    try:
        _hasher.verify(user.password_hash if user else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        user = None
    if user is None:
        pipe = store.pipeline()
        pipe.incr(failures_key)
        pipe.expire(failures_key, settings.signin_failure_window_s, nx=True)
        pipe.execute()
        raise Unauthenticated("Wrong e-mail or password")
    store.delete(failures_key)
    return user


def start_session(session: Session, user: User) -> str:
    """Create a dashboard session and return the cookie token (never stored)."""
    token = secrets.token_urlsafe(32)
    expires_at = utcnow() + timedelta(days=get_settings().session_days)
    session.add(AuthSession(token_hash=hash_token(token), user_id=user.id, expires_at=expires_at))
    session.flush()
    return token


def user_for_token(session: Session, token: str | None) -> User:
    if not token:
        raise Unauthenticated("Sign in first: this endpoint needs the svc_session cookie")
    auth = session.get(AuthSession, hash_token(token))
    if auth is None or as_utc(auth.expires_at) <= utcnow():
        raise Unauthenticated("Session expired or signed out; sign in again")
    user = session.get(User, auth.user_id)
    if user is None:
        raise Unauthenticated("Session expired or signed out; sign in again")
    return user


def end_session(session: Session, token: str | None) -> None:
    if token:
        session.exec(delete(AuthSession).where(col(AuthSession.token_hash) == hash_token(token)))


def me(session: Session, user: User) -> MeResponse:
    return MeResponse(
        userId=user.id,
        email=user.email,
        entitlements=Entitlements(hasSubscription=has_subscription(session, user.id)),
        user=UserObject(id=user.id, name=user.name, email=user.email),
    )
