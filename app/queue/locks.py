"""One run at a time of a maintenance task, whatever sent it (two beats by mistake, a
beat and an operator, a retry that overlaps the next schedule).

The tasks are idempotent on their own (a period is finalised once, a meter batch is
recorded once with a fixed identifier); the lock keeps a second concurrent run from doing
the same work at the same time, e.g. both sending one unsent batch to Stripe. A run that
finds the lock taken returns at once and does nothing: the holder does the work.

`SET key token NX PX ttl`, released only by its holder (compare-and-delete). The ttl is
above the task's hard time limit, so a run killed with its worker frees the lock when it
expires, and no live run can outlast its own lock.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from app.kit.config import get_settings

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def task_lock_key(name: str) -> str:
    return f"{get_settings().redis_key_prefix}lock:task:{name}"


@contextmanager
def single_run(store: redis.Redis, name: str, *, ttl_s: float) -> Iterator[bool]:
    """Yields True for the one caller that holds the lock of `name`, False for the others."""
    key = task_lock_key(name)
    token = secrets.token_hex(16)
    held = bool(store.set(key, token, nx=True, px=int(ttl_s * 1000)))
    try:
        yield held
    finally:
        if held:
            store.eval(_RELEASE, 1, key, token)
