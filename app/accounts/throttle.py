"""Abuse limits of sign-up and sign-in, and the bounded pool for password hashing.

Failed sign-ins are counted per (e-mail, client IP) and per client IP, never per e-mail
alone: a stranger's wrong guesses from elsewhere cannot lock the owner out. Sign-up and
sign-in requests also have a plain per-IP rate. All counters live in Redis under
`GEOSVC_REDIS_KEY_PREFIX`; Redis being down is UNAVAILABLE (503), not a crash.

Argon2 is deliberately slow and CPU-bound; with many sign-ins at once it would take every
core from /me and /mcp. Hashing goes through a semaphore of `password_hash_concurrency`
slots (default half the CPUs), so at most that many cores hash at any moment.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TypeVar

import redis

from app.config import get_settings
from app.errors import RateLimited, ServiceUnavailable

T = TypeVar("T")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def failures_key(email: str, client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_failures:{_digest(email, client_ip)}"


def ip_failures_key(client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_failures_ip:{_digest(client_ip)}"


def rate_key(client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}auth_rate:{_digest(client_ip)}"


@contextmanager
def redis_required() -> Iterator[None]:
    try:
        yield
    except redis.RedisError as exc:
        raise ServiceUnavailable(
            "Sign-in is temporarily unavailable (its rate store is down); retry shortly"
        ) from exc


def check_rate(store: redis.Redis, client_ip: str) -> None:
    """Count one sign-up/sign-in attempt of this IP; RATE_LIMITED over the per-IP rate."""
    settings = get_settings()
    key = rate_key(client_ip)
    with redis_required():
        pipe = store.pipeline()
        pipe.incr(key)
        pipe.expire(key, settings.auth_rate_window_s, nx=True)
        pipe.ttl(key)
        count, _set, ttl = pipe.execute()
    if int(count) > settings.auth_rate_limit_per_ip:
        wait = max(int(ttl), 1)
        raise RateLimited(
            f"Too many sign-up or sign-in attempts from your address; retry in {wait} s",
            retryAfterSeconds=wait,
        )


def refuse_if_throttled(store: redis.Redis, email: str, client_ip: str) -> None:
    settings = get_settings()
    pair, ip = failures_key(email, client_ip), ip_failures_key(client_ip)
    with redis_required():
        pipe = store.pipeline()
        pipe.get(pair)
        pipe.ttl(pair)
        pipe.get(ip)
        pipe.ttl(ip)
        pair_count, pair_ttl, ip_count, ip_ttl = pipe.execute()
    if int(pair_count or 0) >= settings.signin_max_failures:
        wait = max(int(pair_ttl), 1)
        raise RateLimited(
            f"Too many failed sign-ins for this e-mail from your address; retry in {wait} s",
            retryAfterSeconds=wait,
        )
    if int(ip_count or 0) >= settings.signin_max_failures_per_ip:
        wait = max(int(ip_ttl), 1)
        raise RateLimited(
            f"Too many failed sign-ins from your address; retry in {wait} s",
            retryAfterSeconds=wait,
        )


def note_failure(store: redis.Redis, email: str, client_ip: str) -> None:
    window = get_settings().signin_failure_window_s
    with redis_required():
        pipe = store.pipeline()
        for key in (failures_key(email, client_ip), ip_failures_key(client_ip)):
            pipe.incr(key)
            pipe.expire(key, window, nx=True)
        pipe.execute()


def forget_failures(store: redis.Redis, email: str, client_ip: str) -> None:
    with redis_required():
        store.delete(failures_key(email, client_ip))


@lru_cache
def _hash_slots(size: int) -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(size)


def hash_concurrency() -> int:
    configured = get_settings().password_hash_concurrency
    return configured or max(1, (os.cpu_count() or 2) // 2)


def in_hash_pool(work: Callable[[], T]) -> T:
    """Run Argon2 work in one of the bounded slots (the caller's thread waits for one)."""
    with _hash_slots(hash_concurrency()):
        return work()
