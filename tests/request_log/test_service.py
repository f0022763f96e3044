"""The request log's storage on the real Redis: the cap, the retention, last use, and
what a failed write does (nothing to the call)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Iterator

import pytest
import redis

from app.kit.config import get_settings
from app.kit.embedded_redis import free_port
from app.kit.errors import NotFound
from app.kit.ids import new_user_id
from app.kit.redis_client import sync_redis
from app.request_log import refusals
from app.request_log import service as request_log
from app.request_log.refusals import record_refusal
from app.request_log.service import CallEntry
from app.runtime import reload_settings
from tests.support.fixtures import Backend

DAY_MS = 24 * 3600 * 1000


@pytest.fixture
def user_id(use_backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An account id under a key prefix of this test's own; its keys are deleted after."""
    monkeypatch.setenv("GEOSVC_REDIS_KEY_PREFIX", f"reqlog-test-{secrets.token_hex(4)}:")
    monkeypatch.setenv("GEOSVC_REQUEST_LOG_MAX_CALLS", "3")
    reload_settings()
    account = new_user_id()
    yield account
    sync_redis().delete(request_log.log_key(account), request_log.last_used_key(account))


def entry(at_ms: int, key_id: str = "key1", outcome: str = "OK") -> CallEntry:
    credits = 1 if outcome == "OK" else 0
    return CallEntry(at_ms, "api_key", key_id, "geocode", outcome, 12.5, credits, "call_x")


def now_ms() -> int:
    return int(time.time() * 1000)


class TestRecord:
    async def test_keeps_the_latest_calls_up_to_the_cap(self, user_id: str) -> None:
        start = now_ms()
        for n in range(5):
            await request_log.record(user_id, entry(start + n))

        log = request_log.recent_calls(user_id)

        assert [call.at_ms for call in log.entries] == [start + 4, start + 3, start + 2]
        assert sync_redis().llen(request_log.log_key(user_id)) == 3

    async def test_calls_older_than_the_retention_are_not_shown_and_the_log_expires(
        self, user_id: str
    ) -> None:
        start = now_ms()
        await request_log.record(user_id, entry(start - 8 * DAY_MS))
        await request_log.record(user_id, entry(start))

        shown = request_log.recent_calls(user_id, now_ms=start).entries
        eight_days_on = request_log.recent_calls(user_id, now_ms=start + 8 * DAY_MS).entries

        assert [call.at_ms for call in shown] == [start]
        assert eight_days_on == []
        ttl_ms = int(str(sync_redis().pttl(request_log.log_key(user_id))))
        assert 7 * DAY_MS - 60_000 < ttl_ms <= 7 * DAY_MS

    async def test_filters_by_principal_and_outcome(self, user_id: str) -> None:
        start = now_ms()
        await request_log.record(user_id, entry(start, "key1", "OK"))
        await request_log.record(user_id, entry(start + 1, "key2", "RATE_LIMITED"))
        await request_log.record(user_id, entry(start + 2, "key1", "NOT_FOUND"))

        def outcomes(**filters: str) -> list[str]:
            return [call.outcome for call in request_log.recent_calls(user_id, **filters).entries]

        assert outcomes(principal_id="key1") == ["NOT_FOUND", "OK"]
        assert outcomes(outcome="ERROR") == ["NOT_FOUND", "RATE_LIMITED"]
        assert outcomes(outcome="RATE_LIMITED") == ["RATE_LIMITED"]
        assert outcomes(principal_id="key2", outcome="OK") == []

    async def test_an_unreadable_entry_is_skipped(self, user_id: str) -> None:
        await request_log.record(user_id, entry(now_ms()))
        sync_redis().lpush(request_log.log_key(user_id), "not json", "[1,2]")

        assert len(request_log.recent_calls(user_id).entries) == 1

    async def test_an_entry_from_before_the_surface_was_kept_reads_as_none(
        self, user_id: str
    ) -> None:
        at = now_ms()
        old = [at, "api_key", "key1", "geocode", "OK", 1.5, 1, "call_x", 1]  # nine fields
        sync_redis().lpush(request_log.log_key(user_id), json.dumps(old))
        await request_log.record(user_id, entry(at + 1)._replace(surface="v1"))

        log = request_log.recent_calls(user_id)

        assert [(call.at_ms, call.surface) for call in log.entries] == [(at + 1, "v1"), (at, None)]

    async def test_last_used_keeps_each_keys_latest_call(self, user_id: str) -> None:
        start = now_ms()
        await request_log.record(user_id, entry(start, "key1"))
        await request_log.record(user_id, entry(start + 5, "key2"))
        await request_log.record(user_id, entry(start - 1_000, "key1"))  # finished late

        assert request_log.last_used(user_id) == {"key1": start, "key2": start + 5}

    async def test_redis_down_costs_a_warning_not_an_error(
        self, user_id: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        working = str(get_settings().redis_url)
        monkeypatch.setenv("GEOSVC_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
        reload_settings()
        try:
            await request_log.record(user_id, entry(now_ms()))

            assert "were not recorded" in caplog.text
            with pytest.raises(redis.ConnectionError):
                request_log.recent_calls(user_id)  # the endpoint answers this with 503
        finally:
            monkeypatch.setenv("GEOSVC_REDIS_URL", working)
            reload_settings()


def wait_for_entries(user_id: str, expected: int) -> list[CallEntry]:
    deadline = time.monotonic() + 5
    while len(entries := request_log.recent_calls(user_id).entries) < expected:
        assert time.monotonic() < deadline, entries
        time.sleep(0.01)
    return entries


class TestRefusals:
    async def test_the_first_is_written_at_once_and_a_flood_as_one_entry(
        self, user_id: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("GEOSVC_REQUEST_LOG_MAX_CALLS", "1000")
        reload_settings()
        start = now_ms()
        record_refusal(user_id, entry(start, outcome="RATE_LIMITED"))
        await asyncio.sleep(0)  # the write is a task: the caller never waits for it
        (first,) = await asyncio.to_thread(wait_for_entries, user_id, 1)
        for n in range(1, 6):
            record_refusal(user_id, entry(start + n, outcome="RATE_LIMITED"))
        record_refusal(user_id, entry(start + 9, key_id="key2", outcome="RATE_LIMITED"))

        entries = await asyncio.to_thread(wait_for_entries, user_id, 3)

        assert first.calls == 1
        assert sorted((e.principal_id, e.at_ms, e.calls) for e in entries) == [
            ("key1", start, 1),
            ("key1", start + 1, 5),  # the window's first stands for all five
            ("key2", start + 9, 1),
        ]
        await asyncio.sleep(refusals.WINDOW_S + 0.2)  # nothing more to write
        assert len(request_log.recent_calls(user_id).entries) == 3


class TestOutcome:
    def test_what_the_caller_was_told(self) -> None:
        assert request_log.outcome_of(None) == "OK"
        assert request_log.outcome_of(NotFound()) == "NOT_FOUND"
        assert request_log.outcome_of(redis.ConnectionError()) == "UNAVAILABLE"
        assert request_log.outcome_of(ValueError()) == "INTERNAL"
        assert request_log.outcome_of(asyncio.CancelledError()) == "CANCELLED"
