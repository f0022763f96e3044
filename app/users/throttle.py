"""Abuse limits of sign-up and sign-in, and the bounded pool for password hashing.

Failed sign-ins are counted three ways, all in Redis under `GEOSVC_REDIS_KEY_PREFIX`
(Redis being down is UNAVAILABLE (503), not a crash):

- per (e-mail, client IP): 10 in 15 minutes, then that address waits out the window;
- per client IP (any e-mail): a limit on one address spraying many accounts;
- per account (any IP): a backoff, never a lockout. From the
  `signin_backoff_after`-th failure on, each failure sets a pause before the account's
  next attempt, doubling from `signin_backoff_base_s` up to `signin_backoff_max_s`.
  An attempt inside the pause is answered 429 at once, without looking at the password
  (and without an Argon2 hash); after it one attempt is let through (a `SET NX` claims
  the slot, so a burst at the pause's end still gets one guess), and the right password
  works. The counter slides: it expires `signin_failure_window_s` after the last failure
  and a successful sign-in clears it. So a botnet spread over many addresses gets about
  one guess a minute per account instead of 10 per address.

  A stranger can keep an account in backoff, so an address the owner signed in from
  before (in the last `signin_known_address_days`) is exempt from it: the owner at
  home or at the office signs in as usual, while the per-(e-mail, IP) counter still
  limits that address. Only an owner on a new address waits, at most the cap.

Sign-up and sign-in requests also have a plain per-IP rate (password-reset requests
and confirmations share it). Mail-sending requests are also counted per mailbox per hour
(`count_for_address`), so no address can be flooded through our forms, whoever asks.

Argon2 is deliberately slow and CPU-bound; with many sign-ins at once it would take every
core from /me and /mcp. Hashing goes through a semaphore of `password_hash_concurrency`
slots (default half the CPUs), so at most that many cores hash at any moment.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TypeVar

import redis

from app.kit.config import get_settings
from app.kit.errors import RateLimited, ServiceUnavailable

T = TypeVar("T")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def failures_key(email: str, client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_failures:{_digest(email, client_ip)}"


def ip_failures_key(client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_failures_ip:{_digest(client_ip)}"


def account_failures_key(email: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_failures_account:{_digest(email)}"


def account_pause_key(email: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_pause_account:{_digest(email)}"


def known_address_key(email: str, client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}signin_known_address:{_digest(email, client_ip)}"


def rate_key(client_ip: str) -> str:
    return f"{get_settings().redis_key_prefix}auth_rate:{_digest(client_ip)}"


def address_key(kind: str, mailbox: str) -> str:
    return f"{get_settings().redis_key_prefix}{kind}_per_address:{_digest(mailbox)}"


ADDRESS_WINDOW_S = 3600


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


def count_for_address(store: redis.Redis, kind: str, mailbox: str, limit: int) -> int | None:
    """Count one `kind` request (sign-up, password reset, ...) for this mailbox in the
    hour; None while within `limit`, else the seconds until the hour is over."""
    key = address_key(kind, mailbox)
    with redis_required():
        pipe = store.pipeline()
        pipe.incr(key)
        pipe.expire(key, ADDRESS_WINDOW_S, nx=True)
        pipe.ttl(key)
        count, _set, ttl = pipe.execute()
    return None if int(count) <= limit else max(int(ttl), 1)


def refuse_over_address_limit(
    store: redis.Redis, kind: str, mailbox: str, limit: int, *, what: str = "this e-mail address"
) -> None:
    """`count_for_address`, refusing RATE_LIMITED over the limit (says nothing of whether
    an account uses the address: every address is counted alike). `mailbox` may be any
    other subject of an hourly limit (an account id, a client address), named by `what`."""
    wait = count_for_address(store, kind, mailbox, limit)
    if wait is not None:
        raise RateLimited(
            f"Too many requests for {what} this hour; retry in {wait} s",
            retryAfterSeconds=wait,
        )


def refuse_if_throttled(store: redis.Redis, email: str, client_ip: str) -> None:
    settings = get_settings()
    pair, ip = failures_key(email, client_ip), ip_failures_key(client_ip)
    account, pause = account_failures_key(email), account_pause_key(email)
    with redis_required():
        pipe = store.pipeline()
        pipe.get(pair)
        pipe.ttl(pair)
        pipe.get(ip)
        pipe.ttl(ip)
        pipe.get(account)
        pipe.exists(known_address_key(email, client_ip))
        pair_count, pair_ttl, ip_count, ip_ttl, account_count, known = pipe.execute()
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
    failures = int(account_count or 0)
    if known or failures < settings.signin_backoff_after:
        return
    # Claim the one attempt allowed after the pause; concurrent ones find it taken.
    with redis_required():
        pipe = store.pipeline()
        pipe.set(pause, "1", px=backoff_ms(failures), nx=True)
        pipe.pttl(pause)
        claimed, pause_ms = pipe.execute()
    if not claimed:
        wait = max(math.ceil(pause_ms / 1000), 1)
        raise RateLimited(
            f"Too many failed sign-ins for this account; retry in {wait} s",
            retryAfterSeconds=wait,
        )


def backoff_ms(failures: int) -> int:
    """The pause after the account's `failures`-th failure in a row (0 below the limit)."""
    settings = get_settings()
    beyond = failures - settings.signin_backoff_after
    if beyond < 0:
        return 0
    # min() before the power: 2**beyond grows without bound under a long attack.
    delay = settings.signin_backoff_base_s * 2 ** min(beyond, 32)
    return int(min(delay, settings.signin_backoff_max_s) * 1000)


def note_failure(store: redis.Redis, email: str, client_ip: str) -> None:
    window = get_settings().signin_failure_window_s
    account = account_failures_key(email)
    with redis_required():
        pipe = store.pipeline()
        for key in (failures_key(email, client_ip), ip_failures_key(client_ip)):
            pipe.incr(key)
            pipe.expire(key, window, nx=True)
        pipe.incr(account)
        pipe.expire(account, window)  # sliding: it lasts as long as the guessing does
        failures = int(pipe.execute()[4])
        pause_ms = backoff_ms(failures)
        if pause_ms:
            store.set(account_pause_key(email), "1", px=pause_ms)


def forget_failures(
    store: redis.Redis, email: str, client_ip: str, *, remember: bool = True
) -> None:
    """After a successful sign-in: clear this address's and the account's failures and
    remember the address as the owner's (exempt from the account's backoff). `remember`
    False (the password checked again from a session): only clear them; the address
    was remembered when the session signed in."""
    known_s = get_settings().signin_known_address_days * 86400
    with redis_required():
        pipe = store.pipeline()
        pipe.delete(failures_key(email, client_ip))  # one key each: two slots on a cluster
        pipe.delete(account_failures_key(email))
        pipe.delete(account_pause_key(email))
        if remember:
            pipe.set(known_address_key(email, client_ip), "1", ex=known_s)
        pipe.execute()


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
