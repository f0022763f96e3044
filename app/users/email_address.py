"""The account's e-mail address: confirming it, and moving to another one.

A confirmation link (`Purpose.VERIFY`) proves the account's own address; until then,
with verification on, its keys make no data calls (FORBIDDEN, `reason:
"email_unverified"`). A move (`Purpose.CHANGE_EMAIL`) needs the current password and is
confirmed by a link sent to the new address; the account keeps the old one until then,
and the old address is told when it happens. A new address whose mailbox another
account already uses gets a note instead of a link; the answer, the pending address
shown by `GET /me` and the limits are the same either way, so nobody learns from a move
whether an address has an account. Moves are limited per new mailbox, per account and
per client address.

Following either link ends the account's other links and any pending move (a new
generation: `app.users.reclaim`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import redis
from sqlmodel import Session

from app.account_lock import lock_account
from app.kit.clock import utcnow
from app.kit.config import get_settings
from app.kit.errors import Conflict, InvalidArgument
from app.models import User
from app.users import reclaim, service, throttle, tokens
from app.users.mailbox import mailbox_of, normalise_email
from app.users.messages import Notice
from app.users.signup import SIGNUP
from app.users.tokens import Purpose

CHANGE_EMAIL = "change_email"  # per new mailbox
BY_ACCOUNT = "change_email_account"
BY_CLIENT = "change_email_client"
YOUR_IP = "address changes from your network address"
ACCOUNT = "address changes of this account"


@dataclass(frozen=True)
class Confirmed:
    user: User
    previous_email: str | None  # set when the link moved the account to a new address


def confirm(session: Session, token: str, *, now: datetime | None = None) -> Confirmed:
    """Follow a confirmation link (sign-up or a move). InvalidArgument on a bad, used or
    expired link; Conflict when another account took the new address meanwhile."""
    now = now or utcnow()
    for purpose in (Purpose.VERIFY, Purpose.CHANGE_EMAIL):
        try:
            found = tokens.peek(session, token, purpose, now=now)
        except InvalidArgument:
            continue
        # Serialised with a reset of the same account: a link it ended stays ended.
        lock_account(session, found.user_id)
        row = tokens.use(session, token, purpose, now=now)
        user = session.get(User, row.user_id, populate_existing=True)
        if user is None or user.deleted_at is not None:
            raise InvalidArgument(tokens.INVALID_LINK)
        if purpose is Purpose.VERIFY:
            return _verified(session, user, row.email, now)
        return _moved(session, user, row.email, now)
    raise InvalidArgument(tokens.INVALID_LINK)


def _verified(session: Session, user: User, address: str, now: datetime) -> Confirmed:
    if user.email != address:  # sent to an address the account has left since
        raise InvalidArgument(tokens.INVALID_LINK)
    if user.email_verified_at is None:
        user.email_verified_at = now
        reclaim.new_generation(session, user)
    return Confirmed(user, None)


def _moved(session: Session, user: User, address: str, now: datetime) -> Confirmed:
    if user.pending_email != address:  # the owner asked for another address since
        raise InvalidArgument(tokens.INVALID_LINK)
    taken = service.account_of_address(session, address)
    if taken is not None and taken.id != user.id:
        raise Conflict("Another account uses this address now; nothing was changed")
    previous = user.email
    user.email = normalise_email(address)
    user.mailbox = mailbox_of(address)
    user.email_verified_at = now
    reclaim.new_generation(session, user)
    return Confirmed(user, previous)


def request_move(
    session: Session,
    store: redis.Redis,
    user: User,
    *,
    new_email: str,
    current_password: str,
    client_ip: str,
) -> Notice:
    """Ask to move to `new_email` (current password required): which notice to send
    there, after the commit (a link, or a note when another account uses the address;
    nothing else differs). Flushes only."""
    settings = get_settings()
    user_id, generation = user.id, user.generation
    # A wrong password is counted as a failed sign-in (which leaves the owner's known
    # addresses alone), never in these hourly budgets: a session's guesses must not use
    # up the owner's moves. Counted before the lookup: alike for every address.
    service.check_current_password(session, store, user, current_password, client_ip)
    throttle.refuse_over_address_limit(
        store, BY_CLIENT, client_ip, settings.email_change_per_ip_per_hour, what=YOUR_IP
    )
    throttle.refuse_over_address_limit(
        store, BY_ACCOUNT, user_id, settings.email_change_per_account_per_hour, what=ACCOUNT
    )
    new_email = normalise_email(new_email)
    if new_email == user.email:
        raise InvalidArgument("email: this is already the account's address")
    limit = settings.signup_per_address_per_hour
    throttle.refuse_over_address_limit(store, CHANGE_EMAIL, mailbox_of(new_email), limit)
    lock_account(session, user_id, generation=generation)  # not past a reset meanwhile
    user = session.get(User, user_id, populate_existing=True) or user
    taken = service.account_of_address(session, new_email)
    user.pending_email = new_email  # shown by GET /me alike, taken or not
    session.add(user)
    session.flush()
    if taken is not None and taken.id != user.id:
        return Notice.ADDRESS_TAKEN
    return Notice.CONFIRM_NEW


def check_resend(store: redis.Redis, user: User) -> None:
    """Before sending the confirmation link again: Conflict when already confirmed;
    RATE_LIMITED past the address's hourly sign-up mails."""
    if user.email_verified_at is not None:
        raise Conflict("This address is already confirmed")
    limit = get_settings().signup_per_address_per_hour
    throttle.refuse_over_address_limit(store, SIGNUP, mailbox_of(user.email), limit)
