"""Accounts and dashboard sessions.

The session cookie carries a random 256-bit token; only its SHA-256 is stored, so a
database dump does not yield usable cookies.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from functools import lru_cache

import redis
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, or_, select

from app.account_lock import lock_account
from app.deps.session_tokens import hash_token
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.kit.errors import Conflict, Forbidden, Unauthenticated
from app.kit.ids import new_user_id
from app.models import AuthSession, User
from app.plans import has_subscription
from app.users import passwords, throttle
from app.users.mailbox import mailbox_of, normalise_email
from app.users.schemas import Entitlements, MeResponse, UserObject

_hasher = PasswordHasher()


@lru_cache
def dummy_password_hash() -> str:
    """Verified against when the e-mail is unknown, so both failures take the same time.
    Made once per process when first asked for (the api asks at start-up), not at import:
    a worker or a CLI command would pay 0.1-0.2 s for nothing."""
    return _hasher.hash("not-a-real-password")


def account_of_address(session: Session, email: str) -> User | None:
    """The account using this address or another address of the same mailbox."""
    email = normalise_email(email)
    query = select(User).where(or_(User.email == email, User.mailbox == mailbox_of(email)))
    return session.exec(query).first()


def create_user(
    session: Session,
    *,
    email: str,
    password: str,
    name: str | None = None,
    verified: bool = True,
) -> User:
    """A new account; Conflict when the address's mailbox already has one. `verified`
    False: its keys make no data calls until the address is confirmed."""
    email = normalise_email(email)
    passwords.check_new_password(password, email)  # before the hash: a refusal costs none
    # Hashed before the first query: a sign-up waiting for a hashing slot holds no
    # database connection (16 of them would otherwise empty the pool under /me).
    password_hash = hash_password(password)
    return create_user_hashed(
        session, email=email, password_hash=password_hash, name=name, verified=verified
    )


def create_user_hashed(
    session: Session, *, email: str, password_hash: str, name: str | None, verified: bool
) -> User:
    """`create_user` with the password already checked and hashed. Flushes only."""
    email = normalise_email(email)
    if account_of_address(session, email) is not None:
        raise Conflict("An account with this e-mail already exists")
    user = User(
        id=new_user_id(),
        email=email,
        mailbox=mailbox_of(email),
        name=name,
        password_hash=password_hash,
        email_verified_at=utcnow() if verified else None,
    )
    session.add(user)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent sign-up with the same e-mail won
        session.rollback()
        raise Conflict("An account with this e-mail already exists") from exc
    return user


def hash_password(password: str) -> str:
    return throttle.in_hash_pool(lambda: _hasher.hash(password))


def _password_matches(stored_hash: str, password: str) -> bool:
    try:
        return throttle.in_hash_pool(lambda: _hasher.verify(stored_hash, password))
    except (VerificationError, InvalidHashError):
        return False


def password_matches(stored_hash: str, password: str) -> bool:
    """Unthrottled: for the operator's own tools (`geosvc dev`), never for a request."""
    return _password_matches(stored_hash, password)


def set_password(user: User, password: str) -> None:
    user.password_hash = hash_password(password)


def authenticate(
    session: Session, store: redis.Redis, *, email: str, password: str, client_ip: str
) -> User:
    """Check credentials, throttling repeated failures per (e-mail, IP), per IP and per
    account (a backoff; see app/users/throttle.py). A refusal costs no hash."""
    email = normalise_email(email)
    throttle.refuse_if_throttled(store, email, client_ip)
    user = session.exec(select(User).where(User.email == email)).first()
    stored_hash = user.password_hash if user else dummy_password_hash()
    generation = user.generation if user else None
    # Nothing was written: end the read so the connection goes back to the pool while
    # this request waits for a hashing slot (the user row reloads on next access).
    session.rollback()
    matches = _password_matches(stored_hash, password)
    if user is None or not matches:
        throttle.note_failure(store, email, client_ip)
        raise Unauthenticated("Wrong e-mail or password")
    throttle.forget_failures(store, email, client_ip)
    # Held until the session is stored: a reset during the hash refuses the old password.
    lock_account(session, user.id, generation=generation)
    return user


def check_current_password(
    session: Session, store: redis.Redis, user: User, password: str, client_ip: str
) -> None:
    """The signed-in owner's password again, before a change that needs it (password,
    e-mail, deletion): throttled like sign-in, so a stolen session cannot guess it, and
    the only check of a password from a session. Forbidden on the `currentPassword` field
    when it is wrong.

    As in sign-in, failures and successes are counted apart: a failure counts against
    this address and the account (whose backoff spares the addresses the owner signed
    in from); the owner's success clears them. A flow's own budgets (e.g. moves an
    hour) are counted after this, so wrong guesses never use them up."""
    email, stored_hash = user.email, user.password_hash
    throttle.refuse_if_throttled(store, email, client_ip)
    session.rollback()  # as in authenticate: no connection held while hashing
    if not _password_matches(stored_hash, password):
        throttle.note_failure(store, email, client_ip)
        raise Forbidden("currentPassword: the current password is wrong")
    throttle.forget_failures(store, email, client_ip, remember=False)


def end_sessions(session: Session, user_id: str, *, keep: str | None = None) -> None:
    """Sign the account out everywhere, except the session whose cookie is `keep`."""
    query = delete(AuthSession).where(col(AuthSession.user_id) == user_id)
    if keep:
        query = query.where(col(AuthSession.token_hash) != hash_token(keep))
    session.exec(query)


def start_session(session: Session, user: User) -> str:
    """Create a dashboard session and return the cookie token (never stored)."""
    token = secrets.token_urlsafe(32)
    expires_at = utcnow() + timedelta(days=get_settings().session_days)
    session.add(AuthSession(token_hash=hash_token(token), user_id=user.id, expires_at=expires_at))
    session.flush()
    return token


def end_session(session: Session, token: str | None) -> None:
    if token:
        session.exec(delete(AuthSession).where(col(AuthSession.token_hash) == hash_token(token)))


def me(session: Session, user: User) -> MeResponse:
    return MeResponse(
        userId=user.id,
        email=user.email,
        entitlements=Entitlements(hasSubscription=has_subscription(session, user.id)),
        user=UserObject(id=user.id, name=user.name, email=user.email),
        emailVerified=user.email_verified_at is not None,
        pendingEmail=user.pending_email,
    )
