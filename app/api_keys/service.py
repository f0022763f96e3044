"""API keys: create, list, revoke, and bearer verification.

Plaintext: `svc_live_ak_<keyId>_<secret>`. The keyId (16 lowercase alphanumerics) is the
primary key; of the secret (40 base62 characters, about 238 bits) only
HMAC-SHA256(pepper, secret) is stored, so neither a database dump nor a log line yields
a usable key.

Verification (`verify_bearer`, `averify_bearer`) is on the hot path of every data call:
a cache hit is one dict lookup and one HMAC. Entries (found, revoked or unknown keys)
live `key_cache_ttl_s` (1 s) counted from *before* the database read, so a revocation
committed anywhere is seen by every api process within that time; the process that
revokes also drops its own entry on commit.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime

import anyio.to_thread
from sqlalchemy import event
from sqlmodel import Session, col, func, select

from app.accounts.locks import lock_account
from app.api_keys.schemas import KEY_NAME_MAX, ApiKeyRecord
from app.clock import iso_ms, utcnow
from app.config import Settings, get_settings
from app.db import new_session
from app.errors import InvalidArgument, KeyLimitReached, NotFound, Unauthenticated
from app.ids import random_base62, random_lower_alnum
from app.models import ApiKey

KEY_PREFIX = "svc_live_ak_"
KEY_ID_LENGTH = 16
SECRET_LENGTH = 40
DEFAULT_SCOPES = ("read:data",)

_TOKEN = re.compile(r"svc_live_ak_([a-z0-9]{8,32})_([A-Za-z0-9]{32,128})")
_CACHE_MAX_ENTRIES = 50_000


@dataclass(frozen=True)
class ApiKeyPrincipal:
    """Who a verified bearer key acts for."""

    key_id: str
    user_id: str
    scopes: frozenset[str]


# --- management (dashboard / control plane) -------------------------------------------


def hash_secret(secret: str) -> str:
    return hmac.new(_verifier().pepper, secret.encode(), hashlib.sha256).hexdigest()


def _clean_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= KEY_NAME_MAX:
        raise InvalidArgument(f"name: must be 1 to {KEY_NAME_MAX} characters")
    return name


def active_key_count(session: Session, user_id: str) -> int:
    query = select(func.count()).where(
        col(ApiKey.user_id) == user_id, col(ApiKey.revoked_at).is_(None)
    )
    return int(session.exec(query).one())


def create_key(session: Session, user_id: str, name: str) -> tuple[ApiKey, str]:
    """Create an active key; returns the row and the plaintext (never stored). Flushes only.

    The account row is locked first, so concurrent creations cannot pass the limit.
    """
    name = _clean_name(name)
    lock_account(session, user_id)
    limit = get_settings().max_active_keys
    if active_key_count(session, user_id) >= limit:
        raise KeyLimitReached(
            f"An account can have at most {limit} active API keys; revoke one to create another"
        )
    key_id = random_lower_alnum(KEY_ID_LENGTH)
    secret = random_base62(SECRET_LENGTH)
    key = ApiKey(
        key_id=key_id,
        user_id=user_id,
        name=name,
        env="live",
        scopes=" ".join(DEFAULT_SCOPES),
        secret_hash=hash_secret(secret),
    )
    session.add(key)
    session.flush()
    return key, f"{KEY_PREFIX}{key_id}_{secret}"


def list_keys(session: Session, user_id: str) -> list[ApiKey]:
    """Active keys of the account, newest first."""
    query = (
        select(ApiKey)
        .where(col(ApiKey.user_id) == user_id, col(ApiKey.revoked_at).is_(None))
        .order_by(col(ApiKey.created_at).desc(), col(ApiKey.key_id))
    )
    return list(session.exec(query))


def revoke_key(
    session: Session, user_id: str, key_id: str, *, now: datetime | None = None
) -> ApiKey:
    """Revoke an active key of this account. Unknown, already revoked and other accounts'
    keys are the same 404. Flushes only; this process's cache entry is dropped on commit."""
    key = session.get(ApiKey, key_id) if len(key_id) <= 32 else None
    if key is None or key.user_id != user_id or key.revoked_at is not None:
        raise NotFound("No active API key with this id")
    key.revoked_at = now or utcnow()
    session.add(key)
    session.flush()
    event.listen(session, "after_commit", lambda _s: invalidate_cached(key_id), once=True)
    return key


def to_record(key: ApiKey) -> ApiKeyRecord:
    return ApiKeyRecord(
        keyId=key.key_id,
        env=key.env,
        name=key.name,
        scopes=key.scopes.split(),
        createdAt=iso_ms(key.created_at),
    )


# --- verification (data plane) -----------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    expires_at: float  # time.monotonic()
    secret_hash: str | None  # None: no such key
    principal: ApiKeyPrincipal | None
    revoked: bool


class KeyCache:
    """keyId -> what the database said, for `ttl_s`. Reads take no lock (a dict lookup is
    atomic); writes and eviction do. Bounded: unknown keyIds are cached too, so a flood of
    random tokens costs one query per keyId and at most `max_entries` entries."""

    def __init__(self, ttl_s: float, max_entries: int = _CACHE_MAX_ENTRIES) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def get(self, key_id: str) -> _Entry | None:
        entry = self._entries.get(key_id)
        if entry is None or entry.expires_at <= time.monotonic():
            return None
        return entry

    def put(self, key_id: str, entry: _Entry) -> None:
        with self._lock:
            if len(self._entries) >= self.max_entries:
                self._evict()
            self._entries[key_id] = entry

    def invalidate(self, key_id: str) -> None:
        with self._lock:
            self._entries.pop(key_id, None)

    def _evict(self) -> None:
        now = time.monotonic()
        for key_id in [k for k, e in self._entries.items() if e.expires_at <= now]:
            del self._entries[key_id]
        if len(self._entries) >= self.max_entries:  # all fresh: drop the oldest half
            for key_id in list(self._entries)[: self.max_entries // 2]:
                del self._entries[key_id]


class _Verifier:
    """The pepper and cache of one Settings (tests swap Settings; production has one)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pepper = settings.pepper()
        self.cache = KeyCache(settings.key_cache_ttl_s)

    def load(self, key_id: str) -> _Entry:
        """Cache miss: read the key in a short session of its own."""
        expires_at = time.monotonic() + self.cache.ttl_s  # before the read: see module doc
        with new_session() as session:
            key = session.get(ApiKey, key_id)
        if key is None or key.env != "live":
            entry = _Entry(expires_at, None, None, revoked=False)
        else:
            principal = ApiKeyPrincipal(key.key_id, key.user_id, frozenset(key.scopes.split()))
            entry = _Entry(expires_at, key.secret_hash, principal, key.revoked_at is not None)
        self.cache.put(key_id, entry)
        return entry

    def check(self, entry: _Entry, secret: str) -> ApiKeyPrincipal:
        digest = hmac.new(self.pepper, secret.encode(), hashlib.sha256).hexdigest()
        stored = entry.secret_hash or "0" * 64  # compare anyway: unknown ids take as long
        if entry.principal is None or not hmac.compare_digest(digest, stored):
            raise Unauthenticated("Invalid API key")
        if entry.revoked:
            raise Unauthenticated("This API key has been revoked; create a new one")
        return entry.principal


_current: _Verifier | None = None
_current_lock = threading.Lock()


def _verifier() -> _Verifier:
    global _current
    settings = get_settings()
    verifier = _current
    if verifier is None or verifier.settings is not settings:
        with _current_lock:
            verifier = _current
            if verifier is None or verifier.settings is not settings:
                verifier = _current = _Verifier(settings)
    return verifier


def invalidate_cached(key_id: str) -> None:
    """Forget this process's cache entry of a key (after a revocation commits)."""
    if _current is not None:
        _current.cache.invalidate(key_id)


def parse_bearer(authorization: str | None) -> tuple[str, str]:
    """`Bearer svc_live_ak_<keyId>_<secret>` -> (keyId, secret), else Unauthenticated."""
    if not authorization or not authorization.strip():
        raise Unauthenticated(
            "Missing API key: send the header `Authorization: Bearer svc_live_ak_...`"
        )
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be `Bearer <API key>`")
    match = _TOKEN.fullmatch(token.strip())
    if match is None:
        raise Unauthenticated("Malformed API key: expected svc_live_ak_<keyId>_<secret>")
    return match.group(1), match.group(2)


def verify_bearer(authorization: str | None) -> ApiKeyPrincipal:
    """The principal of an `Authorization` header value; raises Unauthenticated for a
    missing, malformed, unknown, wrong or revoked key. Blocks on the database on a cache
    miss: from async code use `averify_bearer`."""
    key_id, secret = parse_bearer(authorization)
    verifier = _verifier()
    entry = verifier.cache.get(key_id) or verifier.load(key_id)
    return verifier.check(entry, secret)


async def averify_bearer(authorization: str | None) -> ApiKeyPrincipal:
    """`verify_bearer` for the event loop: a cache hit is answered inline, a miss reads
    the database in a worker thread."""
    key_id, secret = parse_bearer(authorization)
    verifier = _verifier()
    entry = verifier.cache.get(key_id)
    if entry is None:
        entry = await anyio.to_thread.run_sync(verifier.load, key_id)
    return verifier.check(entry, secret)
