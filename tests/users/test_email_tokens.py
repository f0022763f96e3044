"""Mailboxes, one-time e-mail tokens, the reset limit per address, and the migration that
brought them: service level, on SQLite and PostgreSQL and the real Redis."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text
from sqlmodel import Session

from app.kit.clock import utcnow
from app.kit.db import new_session
from app.kit.errors import InvalidArgument
from app.models import EmailToken, User
from app.users import reclaim, recovery, tokens
from app.users.mailbox import mailbox_of
from app.users.service import create_user
from app.users.tokens import Purpose
from tests.support.factories import PASSWORD, unique_email
from tests.support.fixtures import Backend


@pytest.mark.parametrize(
    ("address", "mailbox"),
    [
        ("Ada@Example.com", "ada@example.com"),
        ("ada+agent1@example.com", "ada@example.com"),
        ("a.da@example.com", "a.da@example.com"),  # dots matter outside Gmail
        ("A.Da+x+y@gmail.com", "ada@gmail.com"),
        ("ada@googlemail.com", "ada@gmail.com"),
        ("+only@example.com", "+only@example.com"),  # no base address to fold into
        ("....@gmail.com", "....@gmail.com"),
    ],
)
def test_addresses_that_reach_one_inbox_are_one_mailbox(address: str, mailbox: str) -> None:
    assert mailbox_of(address) == mailbox


@pytest.fixture
def session(use_backend: Backend) -> Iterator[Session]:
    with new_session() as db:
        yield db


def a_user(session: Session) -> User:
    user = create_user(session, email=unique_email(), password=PASSWORD, verified=False)
    session.commit()
    return user


class TestTokens:
    def test_a_reset_link_works_for_30_minutes_and_once(self, session: Session) -> None:
        user = a_user(session)
        user_id = user.id
        now = utcnow()
        token = tokens.issue(session, user, Purpose.RESET, "x@example.com", now=now)
        session.commit()
        stored = session.get(EmailToken, tokens.hash_token(token))
        assert stored is not None
        assert token not in stored.token_hash

        with pytest.raises(InvalidArgument, match="^token: "):
            tokens.peek(session, token, Purpose.RESET, now=now + timedelta(minutes=30))
        with pytest.raises(InvalidArgument):
            tokens.peek(session, token, Purpose.VERIFY, now=now)  # another purpose
        used = tokens.use(session, token, Purpose.RESET, now=now + timedelta(minutes=29))
        assert used.user_id == user_id
        session.commit()
        with pytest.raises(InvalidArgument):
            tokens.use(session, token, Purpose.RESET, now=now)

    def test_a_confirmation_link_works_for_two_days(self, session: Session) -> None:
        user = a_user(session)
        now = utcnow()
        token = tokens.issue(session, user, Purpose.VERIFY, "x@example.com", now=now)
        tokens.peek(session, token, Purpose.VERIFY, now=now + timedelta(hours=47))
        with pytest.raises(InvalidArgument):
            tokens.peek(session, token, Purpose.VERIFY, now=now + timedelta(hours=48))

    def test_a_link_made_before_a_new_generation_is_dead(self, session: Session) -> None:
        """A worker that read the account before a reset and stores its link after."""
        user = a_user(session)
        stale = session.get(User, user.id)
        assert stale is not None
        session.expunge(stale)
        with new_session() as other:
            current = other.get(User, user.id)
            assert current is not None
            reclaim.new_generation(other, current)
            other.commit()
        token = tokens.issue(session, stale, Purpose.CHANGE_EMAIL, "w@example.com")
        session.commit()
        with pytest.raises(InvalidArgument, match="^token: "):
            tokens.peek(session, token, Purpose.CHANGE_EMAIL)

    def test_an_expired_reset_link_sets_no_password(self, session: Session) -> None:
        user = a_user(session)
        sent = utcnow() - timedelta(minutes=31)
        token = tokens.issue(session, user, Purpose.RESET, user.email, now=sent)
        session.commit()
        with pytest.raises(InvalidArgument, match="expired"):
            recovery.reset_password(session, token, "a new passphrase here")


def test_reset_links_per_address_stop_silently_past_the_hour_limit(use_backend: Backend) -> None:
    from app.kit.redis_client import sync_redis

    address = f"reset-{secrets.token_hex(4)}@example.com"
    tagged = address.replace("@", "+again@")
    wanted = [recovery.reset_wanted(sync_redis(), email) for email in [address] * 3 + [tagged]]
    assert wanted == [True, True, True, False]  # one mailbox


def test_the_migration_verifies_existing_accounts_and_gives_each_mailbox_one(
    tmp_path: Path,
) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    config = Config()
    config.set_main_option("script_location", str(Path("app/migrations").resolve()))
    config.attributes["engine"] = engine
    command.upgrade(config, "0005_checkout_url")
    created = datetime(2026, 1, 2, tzinfo=UTC)
    with engine.begin() as db:
        for n, email in enumerate(["ada@gmail.com", "a.da+1@gmail.com", "bo@example.com"]):
            db.execute(
                text(
                    "INSERT INTO users (id, email, password_hash, created_at) "
                    "VALUES (:id, :email, 'x', :created)"
                ),
                {"id": f"usr_{n}", "email": email, "created": created + timedelta(days=n)},
            )
    command.upgrade(config, "0006_account_email")
    with engine.connect() as db:
        rows = db.execute(
            text("SELECT id, mailbox, email_verified_at IS NOT NULL FROM users ORDER BY id")
        ).all()
    assert [tuple(row) for row in rows] == [
        ("usr_0", "ada@gmail.com", 1),
        ("usr_1", None, 1),  # a later duplicate keeps working; no new sign-up may add one
        ("usr_2", "bo@example.com", 1),
    ]
    command.downgrade(config, "0005_checkout_url")
    engine.dispose()
