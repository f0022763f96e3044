"""One-time links sent by e-mail: confirm an address, confirm a new address, reset a
password.

The link carries 256 random bits (`secrets.token_urlsafe(32)`) in its fragment, which
browsers never send to a server, log or put in a Referer; the page posts it back in a
JSON or form body. Only its SHA-256 is stored (`email_tokens`), so a database dump
yields no usable link. A token is used once: using it deletes its row, and of two
concurrent uses only the one whose delete removed the row goes on.

A token also carries the account's generation when it was made: a password reset, a
password change, a confirmation or a move bumps it (`app.users.reclaim`), and every
link made before is dead, including one a worker was composing at that moment.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import Session, col, delete

from app.kit.clock import as_utc, utcnow
from app.kit.errors import InvalidArgument
from app.models import EmailToken, User


class Purpose(StrEnum):
    VERIFY = "verify"  # the account's own address, after sign-up
    CHANGE_EMAIL = "change_email"  # a new address the owner asked to move to
    RESET = "reset"  # set a new password without the old one


LIFETIMES = {
    Purpose.VERIFY: timedelta(days=2),
    Purpose.CHANGE_EMAIL: timedelta(days=1),
    Purpose.RESET: timedelta(minutes=30),
}
# token_urlsafe(32) is 43 characters; anything else is refused before a query.
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{20,128}")
INVALID_LINK = "token: this link is invalid, was already used or has expired; ask for a new one"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(
    session: Session, user: User, purpose: Purpose, email: str, *, now: datetime | None = None
) -> str:
    """A new token for `email` (the address the link goes to), bound to the generation of
    `user` as read; returns the plaintext, which only the e-mail will carry. Drops the
    account's expired tokens. Flushes only."""
    now = now or utcnow()
    user_id, generation = user.id, user.generation
    session.exec(
        delete(EmailToken).where(
            col(EmailToken.user_id) == user_id, col(EmailToken.expires_at) <= now
        )
    )
    token = secrets.token_urlsafe(32)
    session.add(
        EmailToken(
            token_hash=hash_token(token),
            user_id=user_id,
            purpose=purpose.value,
            email=email,
            generation=generation,
            created_at=now,
            expires_at=now + LIFETIMES[purpose],
        )
    )
    session.flush()
    return token


def peek(
    session: Session, token: str, purpose: Purpose, *, now: datetime | None = None
) -> EmailToken:
    """The live token row (not used up); InvalidArgument on the `token` field otherwise."""
    if not isinstance(token, str) or not _TOKEN_SHAPE.fullmatch(token):
        raise InvalidArgument(INVALID_LINK)
    row = session.get(EmailToken, hash_token(token))
    if row is None or row.purpose != purpose.value or as_utc(row.expires_at) <= (now or utcnow()):
        raise InvalidArgument(INVALID_LINK)
    user = session.get(User, row.user_id, populate_existing=True)
    if user is None or user.generation != row.generation:  # made before a reclaim
        raise InvalidArgument(INVALID_LINK)
    return row


def use(
    session: Session, token: str, purpose: Purpose, *, now: datetime | None = None
) -> EmailToken:
    """Check and use up a token (delete its row): only one of concurrent uses gets it."""
    row = peek(session, token, purpose, now=now)
    found = EmailToken(**row.model_dump())
    removed = session.exec(delete(EmailToken).where(col(EmailToken.token_hash) == row.token_hash))
    if removed.rowcount != 1:
        raise InvalidArgument(INVALID_LINK)
    return found


def discard(session: Session, user_id: str, *purposes: Purpose) -> None:
    """Drop the account's tokens of these purposes (all of them when none is named)."""
    query = delete(EmailToken).where(col(EmailToken.user_id) == user_id)
    if purposes:
        query = query.where(col(EmailToken.purpose).in_([p.value for p in purposes]))
    session.exec(query)
