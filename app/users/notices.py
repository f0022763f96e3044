"""Account e-mails: asked for by a request, composed and sent by a worker.

The api only enqueues `mail.account_notice(kind, user_id, address)` (after its
transaction commits), so a slow or unreachable mail server never holds a request. The
worker makes the link's token itself (`send_notice`): the token exists only in the
worker's memory and the e-mail, never in a broker message, a task's arguments (Flower
shows them) or a log line. A message that could not be sent is retried by the task, with
a new token each time, and the unsent one is deleted.
"""

from __future__ import annotations

import logging

from sqlmodel import col, delete

from app.kit.db import new_session
from app.mail import transport
from app.models import EmailToken, User
from app.queue import celery_app
from app.users import tokens
from app.users.messages import Notice, compose
from app.users.tokens import Purpose

logger = logging.getLogger(__name__)

NOTICE_TASK = "mail.account_notice"

# Notices with a link, and what the link's token is for.
LINKS = {
    Notice.VERIFY: Purpose.VERIFY,
    Notice.CONFIRM_NEW: Purpose.CHANGE_EMAIL,
    Notice.RESET: Purpose.RESET,
}


def request_notice(notice: Notice, user_id: str | None, address: str | None = None) -> None:
    """Ask a worker to send `notice` to the account's address, or to `address` (an
    address no longer or not yet the account's). Call after the commit it describes: a
    broker that cannot take the task is logged, not raised, since what the message is
    about has happened (a lost confirmation link can be sent again from the dashboard)."""
    try:
        celery_app.send_task(
            NOTICE_TASK,
            args=[notice.value, user_id, address],
            ignore_result=True,
            argsrepr=f"({notice.value!r}, {user_id!r})",  # Flower and events: no address
            kwargsrepr="{}",
        )
    except Exception:
        logger.exception("could not enqueue the %s e-mail of %s", notice.value, user_id)


def send_notice(kind: str, user_id: str | None, address: str | None) -> None:
    """The worker's side: compose and send; a link notice gets a fresh token. Raises
    transport.MailDeferred (retry) or MailRefused. An account deleted meanwhile, or an
    address already confirmed, gets nothing."""
    notice = Notice(kind)
    token: str | None = None
    with new_session() as session:
        user = session.get(User, user_id) if user_id else None
        if user_id and (user is None or user.deleted_at is not None):
            return
        to = address or (user.email if user else None)
        other = user.email if user and notice is Notice.EMAIL_CHANGED else None
        if notice in LINKS:
            assert user is not None
            to = user.pending_email if notice is Notice.CONFIRM_NEW else user.email
            if to is None or (notice is Notice.VERIFY and user.email_verified_at is not None):
                return
            token = tokens.issue(session, user, LINKS[notice], to)
            session.commit()
    if to is None:
        return
    try:
        transport.send(compose(notice, to, token=token, other=other))
    except BaseException:
        if token is not None:  # nobody will ever see this link
            with new_session() as session:
                session.exec(
                    delete(EmailToken).where(col(EmailToken.token_hash) == tokens.hash_token(token))
                )
                session.commit()
        raise
