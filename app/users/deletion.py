"""Deleting an account, with its current password.

In one transaction: the subscription ends now (at the payment provider first:
`app.billing.closure`), every key and every OAuth grant with its tokens is revoked
(refused everywhere within a second of the commit, like any revocation; a refresh token
from the commit on) and each key loses its name, every session and e-mail link goes,
the request log (which names keys) is dropped, and the account row keeps only its id:
the e-mail becomes `<id>@deleted.invalid` (a reserved domain nothing is ever sent to),
the name, password, mailbox and pending address are removed. The ledger (`usage_events`),
finalised months, Stripe meter reports and the Stripe customer id stay under the account
id, for accounting; none of them holds an e-mail or a name. The same address can sign up
again as a new account.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import redis
from sqlmodel import Session

from app.account_lock import lock_account
from app.api_keys.service import revoke_all
from app.billing.closure import end_subscription_now
from app.kit.clock import utcnow
from app.models import User
from app.oauth.grants import revoke_all_grants
from app.request_log.service import last_used_key, log_key
from app.users import service, tokens

DELETED_DOMAIN = "deleted.invalid"
# Not an Argon2 hash: no password ever matches it.
NO_PASSWORD = "!deleted"


@dataclass(frozen=True)
class DeletedAccount:
    user_id: str
    former_email: str  # for the goodbye message, then forgotten
    revoked_keys: list[str]


def delete_account(
    session: Session,
    store: redis.Redis,
    user: User,
    *,
    current_password: str,
    client_ip: str,
    now: datetime | None = None,
) -> DeletedAccount:
    """Flushes only: the caller commits (and only then are the keys refused)."""
    now = now or utcnow()
    generation = user.generation  # as read with the sign-in, before the hash
    service.check_current_password(session, store, user, current_password, client_ip)
    user_id, former_email = user.id, user.email
    lock_account(session, user_id, generation=generation)
    end_subscription_now(session, user_id, now)
    revoked = revoke_all(session, user_id, now=now, erase_names=True)
    revoke_all_grants(session, user_id, now=now)
    service.end_sessions(session, user_id)
    tokens.discard(session, user_id)
    user = session.get(User, user_id, populate_existing=True) or user
    user.email = f"{user_id}@{DELETED_DOMAIN}"
    user.name = None
    user.password_hash = NO_PASSWORD
    user.mailbox = None
    user.pending_email = None
    user.email_verified_at = None
    user.monthly_credit_cap = None
    user.deleted_at = now
    session.add(user)
    session.flush()
    try:  # else its entries expire on their own within the log's retention (7 days)
        store.delete(log_key(user_id), last_used_key(user_id))
    except redis.RedisError:
        pass
    return DeletedAccount(user_id, former_email, revoked)
