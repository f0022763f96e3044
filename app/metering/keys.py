"""Redis key names of the credit counters and the rate buckets.

Every key of one account carries the hash tag `{usr_…}`, so the Lua scripts that touch an
account's counter and its reservations stay atomic on a Redis Cluster (one slot).
All keys sit under `GEOSVC_REDIS_KEY_PREFIX`, like Celery's.
"""

from __future__ import annotations

import re
import zlib

from app.kit.config import get_settings


def counter_key(user_id: str, period: str) -> str:
    """Hash with `used` (committed credits), reconciliation's snapshot fields and the
    month's usage alerts claimed (`alert:w:<threshold>`, `alert:q:<quota>`)."""
    return f"{get_settings().redis_key_prefix}usage:{{{user_id}}}:{period}"


def test_counter_key(user_id: str, period: str) -> str:
    """The counter of the account's test-mode keys: like `counter_key`, under its own
    name, so no reconciliation, rollover or usage read of live credits ever sees it."""
    return f"{get_settings().redis_key_prefix}testusage:{{{user_id}}}:{period}"


def reservations_key(user_id: str, period: str) -> str:
    """Sorted set: reservation id -> expiry (Redis server time, ms)."""
    return counter_key(user_id, period) + ":res"


def once_key(user_id: str, period: str, digest: str) -> str:
    """String set by the commit of a call with a retry key (`app.metering.retries`): that
    request is paid for. Beside the counter (same hash tag: the commit script sets it)."""
    return counter_key(user_id, period) + ":once:" + digest


def key_bucket_key(user_id: str, key_id: str) -> str:
    """Token bucket of one API key: hash {t: tokens, ts: last update, ms}."""
    return f"{get_settings().redis_key_prefix}rate:{{{user_id}}}:key:{key_id}"


def account_bucket_key(user_id: str) -> str:
    """Token bucket of the whole account (all its keys)."""
    return f"{get_settings().redis_key_prefix}rate:{{{user_id}}}"


def test_account_bucket_key(user_id: str) -> str:
    """Token bucket of the account's test-mode keys together (apart from live calls')."""
    return f"{get_settings().redis_key_prefix}rate:{{{user_id}}}:test"


def counter_pattern(period: str) -> str:
    """SCAN pattern matching every account's counter of one period."""
    prefix = re.sub(r"([\\*?\[\]])", r"\\\1", get_settings().redis_key_prefix)
    return f"{prefix}usage:{{*}}:{period}"


def user_of_counter(key: str) -> str:
    return key[key.index("{") + 1 : key.index("}")]


def repairs_key() -> str:
    """Hash of reconciliation repair counts (fields up, down, credits_up, credits_down)."""
    return f"{get_settings().redis_key_prefix}metering:reconcile:repairs"


def outbox_bucket(user_id: str) -> int:
    """Which outbox list an account's events go to (one of `GEOSVC_OUTBOX_BUCKETS`)."""
    return zlib.crc32(user_id.encode()) % get_settings().outbox_buckets


def outbox_key(bucket: int = 0) -> str:
    """List of usage events (JSON) committed in Redis and not yet in the SQL ledger, one
    of `GEOSVC_OUTBOX_BUCKETS`, each with a drain of its own. Its hash tag `{o<n>}` puts
    the list and its lock on one slot (the drain's trim script touches both), and spreads
    the buckets over a cluster's shards."""
    return f"{get_settings().redis_key_prefix}usage:outbox:{{o{bucket}}}"


def outbox_lock_key(bucket: int = 0) -> str:
    return outbox_key(bucket) + ":lock"


def legacy_outbox_keys() -> tuple[str, str]:
    """The single outbox list (and its lock) of versions before the buckets: bucket 0's
    drain empties it on one Redis, so an upgrade loses no event waiting there."""
    prefix = get_settings().redis_key_prefix
    return f"{prefix}usage:outbox", f"{prefix}usage:outbox:lock"
