"""A small per-process cache whose entries expire, for hot-path reads of database rows.

Reads take no lock (a dict lookup is atomic); writes and eviction do. Bounded: when full,
expired entries go first, then the oldest half.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

DEFAULT_MAX_ENTRIES = 50_000


class TTLCache(Generic[K, V]):
    def __init__(self, ttl_s: float, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: dict[K, tuple[float, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value, unless absent or expired."""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= time.monotonic():
            return None
        return entry[1]

    def get_recent(self, key: K, max_age_s: float) -> V | None:
        """The value, expired or not, if it was stored at most `max_age_s` ago: the last
        known answer, for when its source (the database) cannot be read."""
        entry = self._entries.get(key)
        if entry is None or entry[0] - self.ttl_s + max_age_s <= time.monotonic():
            return None
        return entry[1]

    def put(self, key: K, value: V, *, expires_at: float | None = None) -> None:
        """Keep `value` until `expires_at` (time.monotonic()), by default `ttl_s` from now.

        Callers that read the database pass a time taken *before* the read, so a change
        committed during the read is never cached for longer than `ttl_s`.
        """
        if expires_at is None:
            expires_at = time.monotonic() + self.ttl_s
        with self._lock:
            if len(self._entries) >= self.max_entries:
                self._evict()
            self._entries[key] = (expires_at, value)

    def invalidate(self, key: K) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def invalidate_where(self, doomed: Callable[[V], bool]) -> None:
        """Drop every entry whose value `doomed` picks (rare: a revocation)."""
        with self._lock:
            for key in [k for k, (_, value) in self._entries.items() if doomed(value)]:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)

    def _evict(self) -> None:
        now = time.monotonic()
        for key in [k for k, (expires_at, _) in self._entries.items() if expires_at <= now]:
            del self._entries[key]
        if len(self._entries) >= self.max_entries:  # all fresh: drop the oldest half
            for key in list(self._entries)[: self.max_entries // 2]:
                del self._entries[key]


class SingleFlight(Generic[K, V]):
    """Concurrent async loads of one key share one load: a burst of requests for an
    uncached key (a new client's first hundred calls, or every caller at the moment an
    entry expires) costs one database read, not one thread and one read each.

    The load runs as a task of its own, so a caller that is cancelled does not cancel it
    for the others; its error reaches every caller.
    """

    def __init__(self) -> None:
        self._loads: dict[tuple[asyncio.AbstractEventLoop, K], asyncio.Future[V]] = {}

    async def load(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        slot = (asyncio.get_running_loop(), key)
        task = self._loads.get(slot)
        if task is None:
            task = self._loads[slot] = asyncio.ensure_future(load())
            task.add_done_callback(lambda done: self._finished(slot, done))
        return await asyncio.shield(task)

    def _finished(self, slot: tuple[asyncio.AbstractEventLoop, K], done: asyncio.Future[V]) -> None:
        self._loads.pop(slot, None)
        if not done.cancelled():
            done.exception()  # retrieved: no "never retrieved" warning if every caller left
