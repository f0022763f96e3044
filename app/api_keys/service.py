"""API keys: create, list and revoke (the control plane). Bearer verification, on the
data plane, is `app.api_keys.verify`.

Plaintext: `svc_live_ak_<keyId>_<secret>`. The keyId (16 lowercase alphanumerics) is the
primary key; of the secret (40 base62 characters, about 238 bits) only
HMAC-SHA256(pepper, secret) is stored, so neither a database dump nor a log line yields
a usable key.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime

from sqlalchemy import event
from sqlmodel import Session, col, func, select

from app.accounts.locks import lock_account
from app.api_keys.schemas import KEY_ID_LENGTH, KEY_NAME_MAX, ApiKeyRecord
from app.api_keys.verify import KEY_PREFIX, note_revoked
from app.clock import iso_ms, utcnow
from app.config import get_settings
from app.errors import InvalidArgument, KeyLimitReached, NotFound
from app.ids import random_base62, random_lower_alnum
from app.models import ApiKey

SECRET_LENGTH = 40
DEFAULT_SCOPES = ("read:data",)


def hash_secret(secret: str) -> str:
    return hmac.new(get_settings().pepper(), secret.encode(), hashlib.sha256).hexdigest()


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


def to_record(key: ApiKey) -> ApiKeyRecord:
    return ApiKeyRecord(
        keyId=key.key_id,
        env=key.env,
        name=key.name,
        scopes=key.scopes.split(),
        createdAt=iso_ms(key.created_at),
    )
