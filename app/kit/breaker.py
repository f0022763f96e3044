"""A circuit breaker per outside service (the upstream data providers, Stripe), shared by
every process through Redis.

Why shared rather than per process: a deployment runs many worker processes with dozens
of threads each. Per process, every one of them would have to see K failures of its own
before it stopped (K times the processes of requests to a provider that is down, each
taking a rate-limiter slot and the caller's time), and after the cool-down every process
would probe at once. Shared, the deployment stops after K failed calls in total and sends
exactly one probe per cool-down. The price is one Redis round trip per upstream call,
small beside an HTTP request; if Redis fails the breaker lets calls through (the upstream
is not known to be down) and only logs.

States, in one Redis hash per provider:
- closed: no `open_until`. `failures` counts consecutive failed calls (after retries);
  a success clears it; the K-th opens the breaker.
- open: now < `open_until`. Calls fail at once with UPSTREAM_UNAVAILABLE (or the error
  the owner chose) and `retryAfterSeconds`, without touching the provider.
- half-open: the cool-down has passed. The first caller becomes the probe (it pushes
  `open_until` out by a lease, so the others keep failing fast meanwhile); its success
  closes the breaker, its failure opens it for another cool-down, and a probe that never
  reports (its worker died) is replaced when the lease runs out.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from enum import Enum

import redis

from app.kit.errors import AppError, UpstreamUnavailable

logger = logging.getLogger(__name__)

_NOW_MS = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
"""

# ARGV[1]: probe lease (ms). Returns {state, n}: {0, failures} closed, {1, ms left} open,
# {2, 0} half-open and this caller is the probe.
_ENTER = (
    _NOW_MS
    + """
local open_until = tonumber(redis.call('HGET', KEYS[1], 'open_until') or '0')
if open_until == 0 then
  return {0, tonumber(redis.call('HGET', KEYS[1], 'failures') or '0')}
end
if now < open_until then return {1, open_until - now} end
redis.call('HSET', KEYS[1], 'open_until', now + tonumber(ARGV[1]), 'probing', 1)
return {2, 0}
"""
)

# ARGV[1]: failures that open; ARGV[2]: cool-down (ms); ARGV[3]: memory of failures (ms).
# Returns 1 when this failure opened (or re-opened) the breaker.
_FAILED = (
    _NOW_MS
    + """
local probing = redis.call('HGET', KEYS[1], 'probing')
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local opened = 0
if probing or failures >= tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'open_until', now + tonumber(ARGV[2]), 'failures', 0)
  redis.call('HDEL', KEYS[1], 'probing')
  opened = 1
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return opened
"""
)


class Passage(Enum):
    CLEAN = "clean"  # closed, no failures recorded: a success needs no write
    RECOVERING = "recovering"  # closed with failures counted, or the half-open probe


def _data_provider_paused(name: str, retry_after_s: int) -> AppError:
    return UpstreamUnavailable(
        f"The {name} data provider is failing; calls to it are paused. No credit was charged.",
        retryAfterSeconds=retry_after_s,
    )


class CircuitBreaker:
    """`open_error(name, retry_after_s)` is what a call refused while open raises (the
    upstream data providers' UPSTREAM_UNAVAILABLE unless given)."""

    def __init__(
        self,
        name: str,
        *,
        client: redis.Redis | None,
        key_prefix: str = "",
        failure_threshold: int = 5,
        cooldown_s: float = 30.0,
        probe_lease_s: float = 30.0,
        failure_memory_s: float = 60.0,
        open_error: Callable[[str, int], AppError] = _data_provider_paused,
    ) -> None:
        self.name = name
        self.open_error = open_error
        self.failure_threshold = failure_threshold
        self.cooldown_ms = round(cooldown_s * 1000)
        self.probe_lease_ms = round(probe_lease_s * 1000)
        self.failure_memory_ms = round(failure_memory_s * 1000)
        self._redis = client
        self._key = f"{key_prefix}upstream:breaker:{name}"
        self._enter = client.register_script(_ENTER) if client is not None else None
        self._failed = client.register_script(_FAILED) if client is not None else None

    def enter(self) -> Passage:
        """Admit a call, or raise `open_error` (with retryAfterSeconds) while open."""
        if self._enter is None:
            return Passage.CLEAN
        try:
            state, value = self._enter(keys=[self._key], args=[self.probe_lease_ms])
        except redis.RedisError as exc:
            logger.warning(
                "breaker for %s unreadable, letting the call through: %s", self.name, exc
            )
            return Passage.CLEAN
        if int(state) == 1:
            raise self.open_error(self.name, max(1, math.ceil(int(value) / 1000)))
        if int(state) == 0 and int(value) == 0:
            return Passage.CLEAN
        return Passage.RECOVERING

    def succeeded(self, passage: Passage) -> None:
        if passage is Passage.CLEAN or self._redis is None:
            return
        try:
            self._redis.delete(self._key)
        except redis.RedisError as exc:
            logger.warning("breaker for %s not reset: %s", self.name, exc)

    def failed(self) -> None:
        if self._failed is None:
            return
        try:
            args = [self.failure_threshold, self.cooldown_ms, self.failure_memory_ms]
            if int(self._failed(keys=[self._key], args=args)):
                logger.warning(
                    "breaker for %s opened for %.0f s", self.name, self.cooldown_ms / 1000
                )
        except redis.RedisError as exc:
            logger.warning("breaker for %s could not record a failure: %s", self.name, exc)
