"""Per-account write serialisation (no imports of other features: billing and api_keys
use it, and accounts.service imports billing)."""

from __future__ import annotations

from sqlmodel import Session, col, update

from app.models import User


def lock_account(session: Session, user_id: str) -> None:
    """Serialise check-then-act writes of one account (key limit, subscription row).

    A no-op UPDATE of the user row: on PostgreSQL it holds the row lock until commit, on
    SQLite it starts the write transaction (one writer at a time). Either way a second
    request for the same account waits here, then sees what the first one committed.
    """
    session.exec(update(User).where(col(User.id) == user_id).values(email=User.email))
