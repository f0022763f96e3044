"""Calls written into an account's request log as the server writes them (a list entry
each, oldest pushed first), for tests that need a long log without making the calls.
This process's Settings must name the server's Redis and key prefix."""

from __future__ import annotations

from app.kit.config import get_settings
from app.kit.redis_client import sync_redis
from app.request_log.service import CallEntry, log_key


def calls(
    count: int, *, start_ms: int, tool: str = "geocode", key_id: str = "key1"
) -> list[CallEntry]:
    """`count` answered calls one millisecond apart, ids `call_<tool>_<n>` (n from 0)."""
    return [
        CallEntry(start_ms + n, "api_key", key_id, tool, "OK", 3.0, 1, f"call_{tool}_{n}")
        for n in range(count)
    ]


def seed_calls(user_id: str, entries: list[CallEntry]) -> None:
    key = log_key(user_id)
    ttl_ms = get_settings().request_log_days * 24 * 3600 * 1000
    pipe = sync_redis().pipeline()
    pipe.lpush(key, *(entry.encode() for entry in sorted(entries)))
    pipe.pexpire(key, ttl_ms)
    pipe.execute()
