"""Bearer API-key verification: on the hot path of every data call.

A cache hit is one dict lookup and one HMAC. Entries (found, revoked or unknown keys)
live `key_cache_ttl_s` (1 s) counted from *before* the database read, so a revocation
committed anywhere is seen by every api process within that time; the process that
revokes also drops its own entry on commit (`invalidate_cached`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
import time
from dataclasses import dataclass

import anyio.to_thread

from app.config import Settings, get_settings
from app.db import new_session
from app.errors import Unauthenticated
from app.models import ApiKey
from app.ttl_cache import TTLCache

KEY_PREFIX = "svc_live_ak_"

_TOKEN = re.compile(r"svc_live_ak_([a-z0-9]{8,32})_([A-Za-z0-9]{32,128})")


@dataclass(frozen=True)
class ApiKeyPrincipal:
    """Who a verified bearer key acts for."""

    key_id: str
    user_id: str
    scopes: frozenset[str]


@dataclass(frozen=True)
class KeyRecord:
    """What the database said of a keyId (`principal` None: no such key)."""

    secret_hash: str | None
    principal: ApiKeyPrincipal | None
    revoked: bool


class _Verifier:
    """The pepper and cache of one Settings (tests swap Settings; production has one)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pepper = settings.pepper()
        # Unknown keyIds are cached too: a flood of random tokens costs one query per keyId.
        self.cache: TTLCache[str, KeyRecord] = TTLCache(settings.key_cache_ttl_s)

    def load(self, key_id: str) -> KeyRecord:
        """Cache miss: read the key in a short session of its own."""
        expires_at = time.monotonic() + self.cache.ttl_s  # before the read: see module doc
        with new_session() as session:
            key = session.get(ApiKey, key_id)
        if key is None or key.env != "live":
            record = KeyRecord(None, None, revoked=False)
        else:
            principal = ApiKeyPrincipal(key.key_id, key.user_id, frozenset(key.scopes.split()))
            record = KeyRecord(key.secret_hash, principal, key.revoked_at is not None)
        self.cache.put(key_id, record, expires_at=expires_at)
        return record

    def check(self, record: KeyRecord, secret: str) -> ApiKeyPrincipal:
        digest = hmac.new(self.pepper, secret.encode(), hashlib.sha256).hexdigest()
        stored = record.secret_hash or "0" * 64  # compare anyway: unknown ids take as long
        if record.principal is None or not hmac.compare_digest(digest, stored):
            raise Unauthenticated("Invalid API key")
        if record.revoked:
            raise Unauthenticated("This API key has been revoked; create a new one")
        return record.principal


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
    record = verifier.cache.get(key_id) or verifier.load(key_id)
    return verifier.check(record, secret)


async def averify_bearer(authorization: str | None) -> ApiKeyPrincipal:
    """`verify_bearer` for the event loop: a cache hit is answered inline, a miss reads
    the database in a worker thread."""
    key_id, secret = parse_bearer(authorization)
    verifier = _verifier()
    record = verifier.cache.get(key_id)
    if record is None:
        record = await anyio.to_thread.run_sync(verifier.load, key_id)
    return verifier.check(record, secret)
