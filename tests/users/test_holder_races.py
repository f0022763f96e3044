"""A request of the account's previous holder on its way while the owner's reset commits:
whatever it makes after the reset is refused (app/account_lock.py), not left alive
beside the keys and grants the reset revoked. Two database sessions play the two
requests, on SQLite and PostgreSQL; an HTTP test cannot place a reset between a
request's sign-in check and its write."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlmodel import Session

from app.api_keys.service import create_key, list_keys
from app.kit.db import new_session
from app.kit.errors import Unauthenticated
from app.models import User
from app.oauth.grants import grant_for
from app.users import reclaim
from app.users.service import create_user
from tests.support.factories import PASSWORD, unique_email
from tests.support.fixtures import Backend


@pytest.fixture
def on_its_way(use_backend: Backend) -> Iterator[tuple[Session, User]]:
    """The squatter's request: a session that read the account before the reset."""
    with new_session() as setup:
        user = create_user(setup, email=unique_email(), password=PASSWORD, verified=False)
        setup.commit()
        user_id = user.id
    with new_session() as request:
        read = request.get(User, user_id)
        assert read is not None
        yield request, read


def reset_commits(user_id: str) -> None:
    with new_session() as owner:
        user = owner.get(User, user_id)
        assert user is not None
        reclaim.end_everything(owner, user)
        owner.commit()


class TestAfterAReset:
    def test_a_key_asked_for_before_it_is_not_made(self, on_its_way: tuple[Session, User]) -> None:
        request, user = on_its_way
        user_id, generation = user.id, user.generation
        reset_commits(user_id)
        with pytest.raises(Unauthenticated, match="sign in again"):
            create_key(request, user_id, "squatter", generation=generation)
        request.rollback()
        with new_session() as check:
            assert list_keys(check, user_id) == []

    def test_an_app_approved_before_it_gets_no_grant(
        self, on_its_way: tuple[Session, User]
    ) -> None:
        request, user = on_its_way
        user_id, generation = user.id, user.generation
        reset_commits(user_id)
        with pytest.raises(Unauthenticated):
            grant_for(request, user_id, "client", "read:data", generation=generation)

    def test_a_request_read_after_it_goes_ahead(self, on_its_way: tuple[Session, User]) -> None:
        request, user = on_its_way
        reset_commits(user.id)
        fresh = request.get(User, user.id, populate_existing=True)
        assert fresh is not None
        _key, plaintext = create_key(request, fresh.id, "owner", generation=fresh.generation)
        request.commit()
        assert plaintext
