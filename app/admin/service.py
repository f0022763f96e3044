"""Operator actions on an account (`geosvc admin`), over the features' own services.

Every change is audited: one `admin_actions` row (actor, time, action, reason, details)
in the same transaction as the change, and one log line. Functions flush only; the
caller commits.

Granting credits is a ledger adjustment: a `usage_events` row with negative credits
(tool `admin_grant`, call id `grant_…`), so the ledger stays the truth and
reconciliation keeps agreeing with it; the Redis counter of the period is lowered by
the same amount once the transaction commits, so the free cap honours the grant at once.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from sqlalchemy import event
from sqlmodel import Session, col, select

from app.account_lock import lock_account
from app.api_keys.service import list_keys, revoke_key
from app.billing.service import set_plan
from app.kit.clock import period_of, utcnow
from app.kit.errors import InvalidArgument, NotFound
from app.metering.keys import counter_key
from app.metering.ledger import GRANT_TOOL, granted_in_period
from app.metering.schemas import UsageResponse
from app.metering.usage import usage_for
from app.models import AdminAction, ApiKey, Subscription, UsageEvent, User
from app.observability.logs import log_event
from app.plans import Plan, get_subscription, plan_of
from app.users.mailbox import normalise_email

logger = logging.getLogger("geosvc.admin")

MAX_GRANT = 1_000_000
REASON_MAX = 500
ACTOR_MAX = 200

# Lower `used` only where the counter exists: a missing counter is read from the ledger,
# which already holds the grant.
_LOWER_USED = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HINCRBY', KEYS[1], 'used', -tonumber(ARGV[1]))
end
return false
"""


@dataclass(frozen=True)
class AccountReport:
    user: User
    plan: Plan
    subscription_status: str
    usage: UsageResponse
    active_keys: list[ApiKey]
    revoked_keys: int
    granted_this_period: int


def find_user(session: Session, query: str) -> User:
    """By id (`usr_…`) or e-mail (case-insensitive)."""
    query = query.strip()
    if not 1 <= len(query) <= 320:
        raise InvalidArgument("user: give an id (usr_…) or an e-mail address")
    user = session.get(User, query) if query.startswith("usr_") else None
    if user is None:
        user = session.exec(select(User).where(User.email == normalise_email(query))).first()
    if user is None:
        raise NotFound(f"No account matches {query!r}")
    return user


def account_report(session: Session, user_id: str, *, now: datetime | None = None) -> AccountReport:
    now = now or utcnow()
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"No account {user_id!r}")
    subscription = get_subscription(session, user_id)
    all_keys = session.exec(select(ApiKey).where(col(ApiKey.user_id) == user_id)).all()
    return AccountReport(
        user=user,
        plan=plan_of(session, user_id, now=now),
        subscription_status=subscription.status if subscription else "none",
        usage=usage_for(session, user_id, now=now),
        active_keys=list_keys(session, user_id),
        revoked_keys=sum(1 for key in all_keys if key.revoked_at is not None),
        granted_this_period=granted(session, user_id, period_of(now)),
    )


def granted(session: Session, user_id: str, period: str) -> int:
    return granted_in_period(session, user_id, period)


def _checked_reason(reason: str) -> str:
    reason = reason.strip()
    if not 1 <= len(reason) <= REASON_MAX:
        raise InvalidArgument(f"reason: must be 1 to {REASON_MAX} characters")
    return reason


def _audit(
    session: Session, *, actor: str, action: str, user_id: str, reason: str, **details: Any
) -> AdminAction:
    actor = actor.strip()
    if not 1 <= len(actor) <= ACTOR_MAX:
        raise InvalidArgument(f"actor: must be 1 to {ACTOR_MAX} characters")
    record = AdminAction(
        actor=actor,
        action=action,
        user_id=user_id,
        reason=_checked_reason(reason),
        details=json.dumps(details, sort_keys=True),
    )
    session.add(record)
    session.flush()
    log_event(
        logger,
        "admin_action",
        f"admin {action} on {user_id} by {actor}",
        action=action,
        user_id=user_id,
        actor=actor,
        reason=record.reason,
        details=details,
    )
    return record


def change_plan(
    session: Session,
    user_id: str,
    plan: Plan,
    *,
    actor: str,
    reason: str,
    now: datetime | None = None,
) -> Subscription:
    """Put the account on `plan` now: standard is active for the current month (renewed
    like any local subscription), free ends the subscription."""
    now = now or utcnow()
    _checked_reason(reason)
    lock_account(session, user_id)
    before = plan_of(session, user_id, now=now)
    subscription = set_plan(session, user_id, plan, now)
    _audit(
        session,
        actor=actor,
        action="change_plan",
        user_id=user_id,
        reason=reason,
        before=before.value,
        after=plan.value,
    )
    return subscription


def grant_credits(
    session: Session,
    store: redis.Redis,
    user_id: str,
    credits: int,
    *,
    actor: str,
    reason: str,
    now: datetime | None = None,
) -> UsageEvent:
    """Give back `credits` of this month's usage (a negative ledger row, audited)."""
    if not 1 <= credits <= MAX_GRANT:
        raise InvalidArgument(f"credits: must be 1 to {MAX_GRANT}")
    _checked_reason(reason)
    now = now or utcnow()
    if session.get(User, user_id) is None:
        raise NotFound(f"No account {user_id!r}")
    period = period_of(now)
    adjustment = UsageEvent(
        call_id="grant_" + secrets.token_hex(12),
        user_id=user_id,
        key_id=None,
        tool=GRANT_TOOL,
        credits=-credits,
        period=period,
        created_at=now,
    )
    session.add(adjustment)
    session.flush()
    _audit(
        session,
        actor=actor,
        action="grant_credits",
        user_id=user_id,
        reason=reason,
        credits=credits,
        period=period,
        call_id=adjustment.call_id,
    )
    key = counter_key(user_id, period)

    def lower_counter(_session: Session) -> None:
        try:
            store.eval(_LOWER_USED, 1, key, credits)
        except redis.RedisError as exc:  # reconciliation brings the counter to the ledger
            logger.warning("grant to %s not applied to Redis (%s)", user_id, exc)

    event.listen(session, "after_commit", lower_counter, once=True)
    return adjustment


def revoke_all_keys(
    session: Session,
    user_id: str,
    *,
    actor: str,
    reason: str,
    now: datetime | None = None,
) -> list[str]:
    """Revoke every active key of the account; returns their ids."""
    _checked_reason(reason)
    now = now or utcnow()
    lock_account(session, user_id)
    revoked = [
        revoke_key(session, user_id, key.key_id, now=now).key_id
        for key in list_keys(session, user_id)
    ]
    _audit(session, actor=actor, action="revoke_keys", user_id=user_id, reason=reason, keys=revoked)
    return revoked


def audit_trail(session: Session, user_id: str, limit: int = 20) -> list[AdminAction]:
    query = (
        select(AdminAction)
        .where(col(AdminAction.user_id) == user_id)
        .order_by(col(AdminAction.at).desc(), col(AdminAction.id).desc())
        .limit(limit)
    )
    return list(session.exec(query))
