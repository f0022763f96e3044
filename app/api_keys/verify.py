"""Bearer API-key verification: on the hot path of every data call.

A cache hit is one dict lookup and one HMAC. Entries (found, revoked or unknown keys)
live `key_cache_ttl_s` (1 s) counted from *before* the database read, so a revocation
committed anywhere is seen by every api process within that time; the process that
revokes also drops its own entry on commit (`note_revoked`).

While the database is unreachable, a key read within `db_outage_cache_s` (10 min) is
answered from what the database said then, so tool calls go on through an outage. A key
revoked before the outage stays revoked: the cached answer says so, or, when this process
read the key before the revocation, the Redis mark `note_revoked` left (kept as long as
the outage window). A key not seen lately is 503 UNAVAILABLE, never let through.

An expired key is refused like a revoked one: its record carries the expiry, compared
at every check, so a cached key stops at the moment it expires (in an outage too).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime

import anyio.to_thread
from redis.exceptions import RedisError
from sqlalchemy import update
from sqlmodel import col

from app.kit import secret_keys
from app.kit.clock import as_utc, iso_ms, utcnow
from app.kit.config import Settings, get_settings
from app.kit.credentials import API_KEY_PREFIX, TEST_API_KEY_PREFIX, bearer_credential
from app.kit.db import new_session
from app.kit.errors import Forbidden, ServiceUnavailable, Unauthenticated, unavailable_for
from app.kit.per_settings import PerSettings
from app.kit.principal import CallerPrincipal
from app.kit.redis_client import sync_redis
from app.kit.ttl_cache import SingleFlight, TTLCache
from app.models import ApiKey

logger = logging.getLogger(__name__)

KEY_PREFIX = API_KEY_PREFIX
# The plaintext's prefix of each key environment (`ApiKey.env`).
PREFIX_OF_ENV = {"live": API_KEY_PREFIX, "test": TEST_API_KEY_PREFIX}
KEY_ENVS = tuple(PREFIX_OF_ENV)
KEY_PREFIXES = tuple(PREFIX_OF_ENV.values())

_TOKEN = re.compile(r"svc_(live|test)_ak_([a-z0-9]{8,32})_([A-Za-z0-9]{32,128})")


@dataclass(frozen=True)
class KeyRecord:
    """What the database said of a keyId (`principal` None: no such key). The expiry is
    judged at each check, not at the read, so a cached key stops at its expiry exactly."""

    secret_hash: str | None
    principal: CallerPrincipal | None
    revoked: bool
    expires_at: datetime | None = None


class _Verifier:
    """The pepper and cache of one Settings (tests swap Settings; production has one)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pepper = secret_keys.pepper(settings)
        self.previous_pepper = secret_keys.previous_pepper(settings)
        self._rehashing: set[str] = set()
        self._rehashing_lock = threading.Lock()
        # Unknown keyIds are cached too: a flood of random tokens costs one query per keyId.
        self.cache: TTLCache[str, KeyRecord] = TTLCache(settings.key_cache_ttl_s)

    def load(self, key_id: str) -> KeyRecord:
        """Cache miss: read the key in a short session of its own; while the database is
        unreachable, what it said within `db_outage_cache_s` (see module doc)."""
        expires_at = time.monotonic() + self.cache.ttl_s  # before the read: see module doc
        try:
            with new_session() as session:
                key = session.get(ApiKey, key_id)
        except Exception as exc:
            unavailable = unavailable_for(exc)
            if unavailable is None:
                raise
            return self._last_known(key_id, unavailable)
        if key is None or key.env not in PREFIX_OF_ENV:
            record = KeyRecord(None, None, revoked=False)
        else:
            principal = CallerPrincipal(
                key.key_id, key.user_id, frozenset(key.scopes.split()), env=key.env
            )
            expiry = as_utc(key.expires_at) if key.expires_at is not None else None
            record = KeyRecord(key.secret_hash, principal, key.revoked_at is not None, expiry)
        self.cache.put(key_id, record, expires_at=expires_at)
        return record

    def _last_known(self, key_id: str, unavailable: ServiceUnavailable) -> KeyRecord:
        record = self.cache.get_recent(key_id, self.settings.db_outage_cache_s)
        if record is None:
            raise unavailable  # never seen lately: cannot tell a good key from a bad one
        if record.principal is not None and not record.revoked and revoked_lately(key_id):
            return KeyRecord(record.secret_hash, record.principal, True, record.expires_at)
        return record

    def check(self, record: KeyRecord, secret: str, env: str = "live") -> CallerPrincipal:
        """The key's principal, when `secret` matches and the token's environment (`env`,
        from its prefix) is the key's: a live key's id sent as svc_test_ is refused."""
        digest = hmac.new(self.pepper, secret.encode(), hashlib.sha256).hexdigest()
        stored = record.secret_hash or "0" * 64  # compare anyway: unknown ids take as long
        matches = hmac.compare_digest(digest, stored)
        if not matches and self.previous_pepper is not None:
            old = hmac.new(self.previous_pepper, secret.encode(), hashlib.sha256).hexdigest()
            matches = hmac.compare_digest(old, stored)
            if matches and record.principal is not None:
                self._rehash_later(record.principal.key_id, stored, digest)
        if record.principal is None or not matches or record.principal.env != env:
            raise Unauthenticated("Invalid API key")
        return in_force(record)

    def _rehash_later(self, key_id: str, old_hash: str, new_hash: str) -> None:
        """A key hashed with the previous pepper: store its hash under the current one, off
        the request's path (once per key and process; the UPDATE is conditional, so racing
        processes agree)."""
        with self._rehashing_lock:
            if key_id in self._rehashing:
                return
            self._rehashing.add(key_id)
        threading.Thread(
            target=self._rehash, args=(key_id, old_hash, new_hash), daemon=True
        ).start()

    def _rehash(self, key_id: str, old_hash: str, new_hash: str) -> None:
        try:
            with new_session() as session:
                session.execute(
                    update(ApiKey)
                    .where(col(ApiKey.key_id) == key_id, col(ApiKey.secret_hash) == old_hash)
                    .values(secret_hash=new_hash)
                )
                session.commit()
            self.cache.invalidate(key_id)
        except Exception:  # the next use tries again; the key verifies meanwhile
            logger.warning("could not re-hash API key %s under the current pepper", key_id)
        finally:
            with self._rehashing_lock:
                self._rehashing.discard(key_id)


def in_force(record: KeyRecord) -> CallerPrincipal:
    """The principal of a known key, unless it is revoked or expired (Unauthenticated)."""
    if record.principal is None:
        raise Unauthenticated("Invalid API key")
    if record.revoked:
        raise Unauthenticated("This API key has been revoked; create a new one")
    if record.expires_at is not None and utcnow() >= record.expires_at:
        raise Unauthenticated(
            f"This API key expired at {iso_ms(record.expires_at)}; create a new one"
        )
    return record.principal


_verifiers: PerSettings[_Verifier] = PerSettings(_Verifier)


def _verifier() -> _Verifier:
    return _verifiers.get()


def invalidate_cached(key_id: str) -> None:
    """Forget this process's cache entry of a key (after a revocation commits)."""
    if (current := _verifiers.built()) is not None:
        current.cache.invalidate(key_id)


def _revoked_key(key_id: str) -> str:
    return f"{get_settings().redis_key_prefix}apikey:revoked:{key_id}"


def note_revoked(key_id: str) -> None:
    """After a revocation commits: drop this process's cache entry, and mark the key
    revoked in Redis for as long as any process may serve it from its cache during a
    database outage, so a key revoked before an outage stays revoked through it."""
    invalidate_cached(key_id)
    mark_revoked(key_id)


def mark_revoked(credential_id: str) -> None:
    """The Redis mark of a revoked credential (a key id, or an OAuth grant id or token
    hash: the namespaces never collide), read only while the database is down."""
    settings = get_settings()
    try:
        sync_redis().set(_revoked_key(credential_id), "1", ex=int(settings.db_outage_cache_s) + 60)
    except RedisError:  # the database has it; only an outage cache could miss it
        logger.warning("could not mark credential %s revoked in Redis", credential_id)


def revoked_lately(*credential_ids: str) -> bool:
    """Whether any of these was marked revoked (or Redis cannot say: then True)."""
    try:
        return bool(sync_redis().exists(*(_revoked_key(i) for i in credential_ids)))
    except RedisError:
        return True  # neither the database nor Redis can vouch for the key: refuse it


def parse_bearer(authorization: str | None) -> tuple[str, str, str]:
    """`Bearer svc_<env>_ak_<keyId>_<secret>` -> (keyId, secret, env), else
    Unauthenticated."""
    if not authorization or not authorization.strip(" \t"):
        raise Unauthenticated(
            "Missing API key: send the header `Authorization: Bearer svc_live_ak_...`"
        )
    token = bearer_credential(authorization)
    if token is None:
        raise Unauthenticated("The Authorization header must be `Bearer <API key>`")
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise Unauthenticated(
            "Malformed API key: expected svc_live_ak_<keyId>_<secret> (or svc_test_ak_...)"
        )
    return match.group(2), match.group(3), match.group(1)


def verify_bearer(authorization: str | None) -> CallerPrincipal:
    """The principal of an `Authorization` header value; raises Unauthenticated for a
    missing, malformed, unknown, wrong, revoked or expired key. Blocks on the database on a cache
    miss: from async code use `averify_bearer`."""
    key_id, secret, env = parse_bearer(authorization)
    verifier = _verifier()
    record = verifier.cache.get(key_id) or verifier.load(key_id)
    return verifier.check(record, secret, env)


async def averify_bearer(authorization: str | None) -> CallerPrincipal:
    """`verify_bearer` for the event loop: a cache hit is answered inline, a miss reads
    the database in a worker thread (one read for all the concurrent misses of a key)."""
    key_id, secret, env = parse_bearer(authorization)
    verifier = _verifier()
    record = verifier.cache.get(key_id)
    if record is None:
        record = await _loads.load(key_id, lambda: anyio.to_thread.run_sync(verifier.load, key_id))
    return verifier.check(record, secret, env)


_loads: SingleFlight[str, KeyRecord] = SingleFlight()

# The scope a key needs for the data tools (every key has it today).
DATA_SCOPE = "read:data"


async def averify_data_key(authorization: str | None) -> CallerPrincipal:
    """`averify_bearer`, and Forbidden for a key without the data scope."""
    principal = await averify_bearer(authorization)
    if DATA_SCOPE not in principal.scopes:
        raise Forbidden(f"This API key lacks the {DATA_SCOPE} scope")
    return principal


async def averify_own_key(user_id: str, key_id: str) -> CallerPrincipal:
    """The principal of the signed-in account's key `key_id`, for a call the dashboard
    makes for it (the playground: the session stands for the secret, which is never
    stored). Another account's key, an unknown, revoked or expired one, or one without
    the data scope: refused as a bearer key would be."""
    if not re.fullmatch(r"[a-z0-9]{8,32}", key_id):
        raise Unauthenticated("No API key with this id in your account")
    verifier = _verifier()
    record = verifier.cache.get(key_id)
    if record is None:
        record = await _loads.load(key_id, lambda: anyio.to_thread.run_sync(verifier.load, key_id))
    if record.principal is None or record.principal.user_id != user_id:
        raise Unauthenticated("No API key with this id in your account")
    principal = in_force(record)
    if DATA_SCOPE not in principal.scopes:
        raise Forbidden(f"This API key lacks the {DATA_SCOPE} scope")
    return principal
