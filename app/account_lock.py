"""Per-account write serialisation, in the bottom layer: accounts, api_keys, billing and
oauth all lock the account row, and accounts (deletion, a new holder) imports the others."""

from __future__ import annotations

from sqlmodel import Session, col, update

from app.kit.errors import Unauthenticated
from app.models import User


def lock_account(session: Session, user_id: str, *, generation: int | None = None) -> None:
    """Serialise check-then-act writes of one account (key limit, subscription row).

    A no-op UPDATE of the user row: on PostgreSQL it holds the row lock until commit, on
    SQLite it starts the write transaction (one writer at a time). Either way a second
    request for the same account waits here, then sees what the first one committed.

    `generation`: the account's generation as read with the sign-in that authorised this
    write. Unauthenticated if it moved on since (a password reset took the account over
    while this request was on its way): nothing made under the old holder outlives it.
    """
    query = update(User).where(col(User.id) == user_id).values(email=User.email)
    if generation is not None:
        query = query.where(col(User.generation) == generation)
    if session.exec(query).rowcount != 1 and generation is not None:
        raise Unauthenticated("This sign-in has ended (the password was reset); sign in again")
