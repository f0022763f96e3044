"""Passwords: reset by an e-mailed link, and change with the current one.

A reset request is answered 202 whatever the address, before it is looked up (the
lookup and the e-mail happen after the answer), so neither the answer nor its timing
says whether an account uses it. It is throttled like sign-in (the per-IP rate) and per
mailbox: past `password_reset_per_address_per_hour` requests an hour, an address gets
no more links (still 202), so nobody can flood someone's inbox with them.

A reset link works once, for 30 minutes (`app.users.tokens`). Following it proves
the owner reads the address, so it confirms an account never confirmed, and, since
whoever knew the old password may have been someone else (who signed up with another
person's address, or learnt the password), it ends everything made under the old
password: sessions, API keys, OAuth grants, a pending move and every other e-mail link
(`app.users.reclaim`).

A password change with the current one keeps keys and grants (the holder is the same)
but ends the other sessions, any pending move and every e-mail link.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import redis
from sqlmodel import Session

from app.account_lock import lock_account
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import InvalidArgument
from app.models import User
from app.users import passwords, reclaim, service, throttle, tokens
from app.users.mailbox import mailbox_of
from app.users.messages import Notice
from app.users.notices import request_notice
from app.users.tokens import Purpose

logger = logging.getLogger(__name__)

RESET = "password_reset"


def reset_wanted(store: redis.Redis, email: str) -> bool:
    """Count a reset request for this mailbox; False past the hourly limit (the request
    is then answered like any other, and no link is sent)."""
    limit = get_settings().password_reset_per_address_per_hour
    return throttle.count_for_address(store, RESET, mailbox_of(email), limit) is None


def send_reset_link(email: str) -> None:
    """After the 202: a reset link to the account of this address's mailbox, if any.

    By mailbox, as sign-up refuses a second account: someone who signed up first with a
    variant of the owner's address (`owner+x@`, or with dots at Gmail) would otherwise
    keep the owner out for good. The link goes to the account's own address, never to
    the one typed: a variant is not proof of the same inbox everywhere, so typing
    `victim+x@` must not mail a link for the victim's account anywhere but to it."""
    try:
        with new_session() as session:
            user = service.account_of_address(session, email)
            if user is None or user.deleted_at is not None:
                return
            user_id = user.id
        request_notice(Notice.RESET, user_id)
    except Exception:  # after the answer: nobody to tell but the log
        logger.exception("password reset link could not be requested")


@dataclass(frozen=True)
class PasswordReset:
    user_id: str
    revoked_keys: list[str]
    revoked_grants: list[str]


def reset_password(
    session: Session, token: str, password: str, *, now: datetime | None = None
) -> PasswordReset:
    """Use a reset link: new password, the address confirmed, and everything made under
    the old password ended (see module doc). InvalidArgument on the token or the
    password; a refused password leaves the link usable. Flushes only."""
    now = now or utcnow()
    row = tokens.peek(session, token, Purpose.RESET, now=now)
    user_id, sent_to = row.user_id, row.email
    user = session.get(User, user_id)
    if user is None or user.deleted_at is not None or user.email != sent_to:
        raise InvalidArgument(tokens.INVALID_LINK)  # the address changed since it was sent
    passwords.check_new_password(password, user.email)
    session.rollback()  # no connection held while hashing
    password_hash = service.hash_password(password)
    lock_account(session, user_id)  # a key, grant or move being made waits, or is ended
    tokens.use(session, token, Purpose.RESET, now=now)
    user = session.get(User, user_id, populate_existing=True)
    if user is None or user.email != sent_to:
        raise InvalidArgument(tokens.INVALID_LINK)
    user.password_hash = password_hash
    if user.email_verified_at is None:
        user.email_verified_at = now
    ended = reclaim.end_everything(session, user, now=now)
    return PasswordReset(user.id, ended.revoked_keys, ended.revoked_grants)


def change_password(
    session: Session,
    store: redis.Redis,
    user: User,
    *,
    current: str,
    new: str,
    client_ip: str,
    keep_session: str | None,
) -> None:
    """With the current password: set a new one and end the account's other sessions
    (this one stays signed in), any pending move and every e-mail link. Flushes only."""
    generation = user.generation  # as read with the sign-in, before the hash
    service.check_current_password(session, store, user, current, client_ip)
    passwords.check_new_password(new, user.email)
    if new == current:
        raise InvalidArgument("newPassword: choose a password other than the current one")
    password_hash = service.hash_password(new)
    lock_account(session, user.id, generation=generation)  # not past a reset meanwhile
    user = session.get(User, user.id, populate_existing=True) or user
    user.password_hash = password_hash
    reclaim.new_generation(session, user)
    service.end_sessions(session, user.id, keep=keep_session)
    session.flush()
