"""Ending what an account's previous holder set in motion.

Whoever knows an account's password holds it, and that need not be the owner of its
address: someone may have signed up with another person's address, or learnt the
password. So a password reset (the address's owner taking the account, maybe back)
ends everything made under the old password: every session, API key and OAuth grant
(with its refresh and access tokens), any pending move to another address, and every
e-mail link. Links die by generation: the account's `generation` goes up and every link
carries the one it was made in (`app.users.tokens`), so even a link a worker is
composing at this moment is dead on arrival.

Smaller steps end only the links and any pending move (`new_generation`): a password
change (a thief's pending move must not outlive it), a confirmed address and a
completed move. They keep sessions, keys and grants: the holder is the same.

Every step here locks the account row first (`lock_account`), so a key or a move being
made at the same moment either lands before and is ended, or sees the new state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from app.api_keys.service import revoke_all
from app.kit.clock import utcnow
from app.models import User
from app.oauth.grants import revoke_all_grants
from app.users import service, tokens


def new_generation(session: Session, user: User) -> None:
    """Kill every e-mail link of the account and any pending move. Flushes only."""
    user.generation += 1
    user.pending_email = None
    session.add(user)
    tokens.discard(session, user.id)
    session.flush()


@dataclass(frozen=True)
class Ended:
    revoked_keys: list[str]
    revoked_grants: list[str]


def end_everything(session: Session, user: User, *, now: datetime | None = None) -> Ended:
    """A new holder: links, pending move, sessions, keys and OAuth grants all end. The
    caller holds the account lock; keys and grants are refused everywhere within a
    second of the commit. Flushes only."""
    now = now or utcnow()
    new_generation(session, user)
    service.end_sessions(session, user.id)
    keys = revoke_all(session, user.id, now=now)
    grants = revoke_all_grants(session, user.id, now=now)
    return Ended(keys, grants)
