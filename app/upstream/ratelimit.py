"""A rate limiter per upstream provider, shared by every process through Redis.

Each request takes the next free slot of its provider: one Lua call reads the provider's
"next free slot" time (Redis `TIME`, so every host shares one clock), hands it out and
moves it on by 1/rate. The caller sleeps until its slot, so requests leave evenly spaced
(Nominatim's public instance asks for at most one a second) in the order they asked.
A slot further away than `max_wait_s` is not taken: the call fails at once with
UPSTREAM_UNAVAILABLE and `retryAfterSeconds` rather than queueing past the tool deadline.

Should Redis itself fail, the process falls back to the same schedule kept locally: still
polite per process, never a failed call because of the limiter's own storage.
"""

from __future__ import annotations

import logging
import math
import threading
import time

import redis

from app.kit.errors import UpstreamUnavailable

logger = logging.getLogger(__name__)

# KEYS[1]: the provider's next free slot (ms since the epoch);
# ARGV[1]: interval between requests (ms); ARGV[2]: longest acceptable wait (ms).
# Returns {wait_ms, 1} for a slot taken, {wait_ms, 0} for a slot refused.
_TAKE_SLOT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local interval = tonumber(ARGV[1])
local slot = tonumber(redis.call('GET', KEYS[1]) or '0')
if slot < now then slot = now end
local wait = slot - now
if wait > tonumber(ARGV[2]) then return {wait, 0} end
redis.call('SET', KEYS[1], slot + interval, 'PX', wait + interval + 1000)
return {wait, 1}
"""


class RateLimiter:
    """At most `rate_per_s` requests a second to one provider, across all processes."""

    def __init__(
        self,
        name: str,
        rate_per_s: float,
        *,
        client: redis.Redis | None,
        key_prefix: str = "",
        max_wait_s: float = 5.0,
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive (no limiter means no limit)")
        self.name = name
        self.interval_ms = max(1, round(1000 / rate_per_s))
        self.max_wait_ms = round(max_wait_s * 1000)
        self._redis = client
        self._key = f"{key_prefix}upstream:rate:{name}"
        self._script = client.register_script(_TAKE_SLOT) if client is not None else None
        self._local_lock = threading.Lock()
        self._local_next_slot = 0.0

    def wait_for_slot(self) -> None:
        """Block until this request may be sent, or raise UpstreamUnavailable."""
        wait_ms, taken = self._take_slot()
        if not taken:
            retry_after = max(1, math.ceil((wait_ms - self.max_wait_ms) / 1000))
            raise UpstreamUnavailable(
                f"The {self.name} data provider is busy (our request rate to it is limited); "
                "no credit was charged. Try again shortly.",
                retryAfterSeconds=retry_after,
            )
        if wait_ms > 0:
            time.sleep(wait_ms / 1000)

    def _take_slot(self) -> tuple[int, bool]:
        if self._script is not None:
            try:
                wait_ms, taken = self._script(
                    keys=[self._key], args=[self.interval_ms, self.max_wait_ms]
                )
                return int(wait_ms), bool(taken)
            except redis.RedisError as exc:
                logger.warning("rate limiter for %s falls back to this process: %s", self.name, exc)
        return self._take_local_slot()

    def _take_local_slot(self) -> tuple[int, bool]:
        with self._local_lock:
            now_ms = time.time() * 1000
            slot = max(self._local_next_slot, now_ms)
            wait_ms = round(slot - now_ms)
            if wait_ms > self.max_wait_ms:
                return wait_ms, False
            self._local_next_slot = slot + self.interval_ms
            return wait_ms, True
