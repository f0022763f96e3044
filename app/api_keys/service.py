"""API keys: create, list, rename, expire and revoke (the control plane). Bearer
verification, on the data plane, is `app.api_keys.verify`.

Plaintext: `svc_live_ak_<keyId>_<secret>` (`svc_test_ak_` for a test-mode key). The keyId
(16 lowercase alphanumerics) is the primary key; of the secret (40 base62 characters,
about 238 bits) only
HMAC-SHA256(pepper, secret) is stored, so neither a database dump nor a log line yields
a usable key.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import event
from sqlmodel import Session, col, func, select

from app.account_lock import lock_account
from app.api_keys.schemas import KEY_ID_LENGTH, KEY_NAME_MAX, ApiKeyRecord
from app.api_keys.verify import PREFIX_OF_ENV, invalidate_cached, note_revoked
from app.kit import secret_keys
from app.kit.clock import as_utc, iso_ms, utcnow
from app.kit.config import get_settings
from app.kit.errors import Conflict, InvalidArgument, KeyLimitReached, NotFound
from app.kit.ids import random_base62, random_lower_alnum
from app.models import ApiKey
from app.request_log import service as request_log

SECRET_LENGTH = 40
DEFAULT_SCOPES = ("read:data",)
# The furthest ahead a key may be set to expire.
MAX_LIFETIME = timedelta(days=3 * 366)


def hash_secret(secret: str) -> str:
    return hmac.new(secret_keys.pepper(get_settings()), secret.encode(), hashlib.sha256).hexdigest()


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


def _checked_expiry(expires_at: datetime | None, now: datetime) -> datetime | None:
    """An expiry in the future and at most MAX_LIFETIME ahead (UTC when naive)."""
    if expires_at is None:
        return None
    try:
        moment = as_utc(expires_at)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+04:00, before year 1 in UTC
        raise InvalidArgument("expiresAt: must be in the future") from None
    if moment <= now:
        raise InvalidArgument("expiresAt: must be in the future")
    if moment > now + MAX_LIFETIME:
        raise InvalidArgument(f"expiresAt: must be at most {MAX_LIFETIME.days} days ahead")
    return moment


def is_expired(key: ApiKey, now: datetime | None = None) -> bool:
    return key.expires_at is not None and as_utc(key.expires_at) <= (now or utcnow())


def create_key(
    session: Session,
    user_id: str,
    name: str,
    *,
    expires_at: datetime | None = None,
    generation: int | None = None,
    env: str = "live",
) -> tuple[ApiKey, str]:
    """Create an active key (expiring at `expires_at`, if given) of environment `env`
    ("live", or "test": real data on its own counter, never billed); returns the row and
    the plaintext (never stored). Flushes only.

    The account row is locked first, so concurrent creations cannot pass the limit, and
    a key asked for by a sign-in a password reset has ended since (`generation`, as read
    with the sign-in) is refused rather than made after the reset revoked the others.
    """
    name = _clean_name(name)
    if env not in PREFIX_OF_ENV:
        raise InvalidArgument(f"env: must be one of {', '.join(PREFIX_OF_ENV)}")
    expires_at = _checked_expiry(expires_at, utcnow())
    lock_account(session, user_id, generation=generation)
    limit = get_settings().max_active_keys
    if active_key_count(session, user_id) >= limit:
        raise KeyLimitReached(
            f"An account can have at most {limit} API keys that are not revoked (expired "
            "ones count until revoked); revoke one to create another"
        )
    key_id = random_lower_alnum(KEY_ID_LENGTH)
    secret = random_base62(SECRET_LENGTH)
    key = ApiKey(
        key_id=key_id,
        user_id=user_id,
        name=name,
        env=env,
        scopes=" ".join(DEFAULT_SCOPES),
        secret_hash=hash_secret(secret),
        expires_at=expires_at,
    )
    session.add(key)
    session.flush()
    return key, f"{PREFIX_OF_ENV[env]}{key_id}_{secret}"


def list_keys(session: Session, user_id: str) -> list[ApiKey]:
    """Keys of the account that are not revoked (expired ones too), newest first."""
    query = (
        select(ApiKey)
        .where(col(ApiKey.user_id) == user_id, col(ApiKey.revoked_at).is_(None))
        .order_by(col(ApiKey.created_at).desc(), col(ApiKey.key_id))
    )
    return list(session.exec(query))


def _own_key(session: Session, user_id: str, key_id: str) -> ApiKey:
    """A key of this account that is not revoked; unknown, revoked and other accounts'
    keys are the same 404."""
    key = session.get(ApiKey, key_id) if len(key_id) <= 32 else None
    if key is None or key.user_id != user_id or key.revoked_at is not None:
        raise NotFound("No active API key with this id")
    return key


def update_key(session: Session, user_id: str, key_id: str, changes: Mapping[str, Any]) -> ApiKey:
    """Rename a key (`name`) and/or set or remove its expiry (`expiresAt`, None: never).
    An expired key keeps its expiry: a key that stopped working is replaced, not revived
    (its own expiry, given again, is no change).
    Flushes only; this process's cache entry is dropped on commit (the others' within
    `key_cache_ttl_s`)."""
    key = _own_key(session, user_id, key_id)
    now = utcnow()
    if "name" in changes:
        key.name = _clean_name(str(changes["name"]))
    wanted = changes.get("expiresAt")
    current = as_utc(key.expires_at) if key.expires_at is not None else None
    if "expiresAt" in changes and (as_utc(wanted) if wanted else None) != current:
        if is_expired(key, now):
            raise Conflict("This key has expired; create a new key instead of extending it")
        key.expires_at = _checked_expiry(wanted, now)
    session.add(key)
    session.flush()
    event.listen(session, "after_commit", lambda _s: invalidate_cached(key_id), once=True)
    return key


def revoke_key(
    session: Session, user_id: str, key_id: str, *, now: datetime | None = None
) -> ApiKey:
    """Revoke a key of this account (expired or not). Unknown, already revoked and other
    accounts' keys are the same 404. Flushes only; this process's cache entry is dropped
    on commit."""
    key = _own_key(session, user_id, key_id)
    key.revoked_at = now or utcnow()
    session.add(key)
    session.flush()
    event.listen(session, "after_commit", lambda _s: note_revoked(key_id), once=True)
    return key


def revoke_all(
    session: Session, user_id: str, *, now: datetime | None = None, erase_names: bool = False
) -> list[str]:
    """Revoke every active key of the account (a deletion, or keys made before anyone
    proved to own the address); `erase_names` also blanks every key's name (a person's
    label is personal data). Refused everywhere within a second of the commit, like
    `revoke_key`. Returns the revoked key ids. Flushes only."""
    now = now or utcnow()
    revoked = []
    for key in session.exec(select(ApiKey).where(col(ApiKey.user_id) == user_id)):
        if key.revoked_at is None:
            key.revoked_at = now
            revoked.append(key.key_id)
        if erase_names:
            key.name = ERASED_NAME
        session.add(key)
    session.flush()
    if revoked:
        event.listen(session, "after_commit", lambda _s: _note_all_revoked(revoked), once=True)
    return revoked


ERASED_NAME = "(deleted)"


def _note_all_revoked(key_ids: list[str]) -> None:
    for key_id in key_ids:
        note_revoked(key_id)


def last_calls(user_id: str) -> dict[str, datetime]:
    """Each key's latest call of any outcome, from the request log; {} when Redis cannot
    say (the keys' `last_used_at`, their latest charged call, still shows)."""
    try:
        known = request_log.last_used(user_id)
    except RedisError:
        return {}
    return {key_id: datetime.fromtimestamp(ms / 1000, UTC) for key_id, ms in known.items()}


def last_used_at(key: ApiKey, last_calls: Mapping[str, datetime]) -> datetime | None:
    """The later of the key's latest charged call (the ledger) and its latest call (the
    request log)."""
    moments = [as_utc(key.last_used_at)] if key.last_used_at is not None else []
    if key.key_id in last_calls:
        moments.append(last_calls[key.key_id])
    return max(moments, default=None)


def to_record(key: ApiKey, last_calls: Mapping[str, datetime] | None = None) -> ApiKeyRecord:
    last = last_used_at(key, last_calls or {})
    return ApiKeyRecord(
        keyId=key.key_id,
        env=key.env,
        name=key.name,
        scopes=key.scopes.split(),
        createdAt=iso_ms(key.created_at),
        expiresAt=iso_ms(key.expires_at) if key.expires_at is not None else None,
        expired=is_expired(key),
        lastUsedAt=iso_ms(last) if last is not None else None,
    )
