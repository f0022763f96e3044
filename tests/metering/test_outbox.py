"""The usage outbox drain: batches, idempotency, one drain at a time."""

from __future__ import annotations

import secrets

import pytest

from app.db import new_session
from app.metering.keys import outbox_key, outbox_lock_key
from app.metering.ledger import ledger_total
from app.metering.outbox import drain, encode
from app.redis_client import sync_redis
from app.runtime import reload_settings
from tests.metering.conftest import Accounts
from tests.metering.test_ledger import events_for


@pytest.fixture(autouse=True)
def own_outbox(accounts: Accounts, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key prefix of its own: workers of other tests drain the shared outbox."""
    monkeypatch.setenv("GEOSVC_REDIS_KEY_PREFIX", f"outbox-test-{secrets.token_hex(4)}:")
    reload_settings()


def push(events: list) -> None:
    sync_redis().rpush(outbox_key(), *(encode(event) for event in events))


class TestDrain:
    def test_moves_everything_in_batches_and_stores_duplicates_once(
        self, accounts: Accounts
    ) -> None:
        user_id = accounts.new_id()
        events = events_for(user_id, 1_200)
        push(events)
        push(events[:10])  # left behind by a drain that died before its trim

        inserted = drain(new_session, sync_redis())

        assert inserted == 1_200
        assert sync_redis().llen(outbox_key()) == 0
        with new_session() as session:
            assert ledger_total(session, user_id, events[0].period) == 1_200

    def test_a_running_drain_is_left_alone(self, accounts: Accounts) -> None:
        user_id = accounts.new_id()
        push(events_for(user_id, 3))
        sync_redis().set(outbox_lock_key(), "someone-else", px=60_000)
        try:
            assert drain(new_session, sync_redis()) == 0
            assert sync_redis().llen(outbox_key()) == 3
        finally:
            sync_redis().delete(outbox_lock_key())

        assert drain(new_session, sync_redis()) == 3
