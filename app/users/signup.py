"""Sign-up, with or without e-mail verification.

Verification is on whenever mail can really be sent (`Settings.verifies_email`: always
in production). Then every sign-up is answered 202 the same way, before the address is
even looked up, and the rest happens after the answer (`register`): a new address gets
an unverified account and a link to confirm it; an address whose mailbox already has an
account gets no account, and its owner gets a note instead. So the answer says nothing
about who has an account, and nobody can take an address they cannot read: an account
made with someone else's address makes no data calls, and the owner can take it over
with a password reset.

Without verification (development without SMTP), a sign-up is verified at once and
answered 201 with a session, and a taken address is 409, as before.

Either way an address's mailbox gets at most `signup_per_address_per_hour` sign-ups.
"""

from __future__ import annotations

import logging

import redis
from sqlalchemy.exc import IntegrityError

from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import Conflict
from app.users import passwords, service, throttle
from app.users.mailbox import mailbox_of, normalise_email
from app.users.messages import Notice
from app.users.notices import request_notice

logger = logging.getLogger(__name__)

SIGNUP = "signup"


def check_before_answer(store: redis.Redis, email: str, password: str) -> None:
    """What can be refused before answering, alike for every address: the password's
    rules, and the per-address limit."""
    email = normalise_email(email)
    passwords.check_new_password(password, email)
    limit = get_settings().signup_per_address_per_hour
    throttle.refuse_over_address_limit(store, SIGNUP, mailbox_of(email), limit)


def register(email: str, password: str, name: str | None) -> None:
    """After the 202: an unverified account and its link, or a note to the address's
    owner. Runs in a background task of the request (its own session)."""
    try:
        password_hash = service.hash_password(password)  # both paths pay the hash
        with new_session() as session:
            known = service.account_of_address(session, email)
            if known is not None:
                request_notice(Notice.SIGNUP_ATTEMPT, known.id)
                return
            try:
                user = service.create_user_hashed(
                    session, email=email, password_hash=password_hash, name=name, verified=False
                )
                session.commit()
            except (Conflict, IntegrityError):  # a concurrent sign-up took it first
                session.rollback()
                known = service.account_of_address(session, email)
                if known is not None:
                    request_notice(Notice.SIGNUP_ATTEMPT, known.id)
                return
        request_notice(Notice.VERIFY, user.id)
    except Exception:  # after the answer: nobody to tell but the log
        logger.exception("sign-up could not be completed")
