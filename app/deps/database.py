"""The database session of a request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends
from sqlmodel import Session

from app.kit.db import new_session


def get_session() -> Iterator[Session]:
    """One session per request; the endpoint commits what it changes."""
    with new_session() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]
