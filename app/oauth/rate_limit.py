"""A per-client-address rate for the OAuth endpoints a stranger can call without any
credential: /authorize, /token and /register, each counted on its own,
GEOSVC_OAUTH_RATE_LIMIT_PER_IP per GEOSVC_OAUTH_RATE_WINDOW_S. The address is the peer's,
or its X-Forwarded-For when the peer is a proxy of GEOSVC_FORWARDED_ALLOW_IPS (none by
default: app/http/forwarded.py).

One async Redis round trip, no thread. Redis being down lets the request through: the
fetch limits (app/oauth/metadata_documents.py) still bound what it costs, and a token
refresh must not fail because a counter cannot be read.
"""

from __future__ import annotations

import hashlib
import logging

from redis.exceptions import RedisError

from app.kit.config import get_settings
from app.kit.redis_client import async_redis

logger = logging.getLogger(__name__)


def rate_key(endpoint: str, client_ip: str) -> str:
    digest = hashlib.sha256(client_ip.encode()).hexdigest()[:32]
    return f"{get_settings().redis_key_prefix}oauth_rate:{endpoint}:{digest}"


async def retry_after(endpoint: str, client_ip: str) -> int | None:
    """Count one request of `client_ip` at `endpoint`: None within the rate, else the
    seconds until its window ends."""
    settings = get_settings()
    key = rate_key(endpoint, client_ip)
    try:
        pipe = async_redis().pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, settings.oauth_rate_window_s, nx=True)
        pipe.ttl(key)
        count, _set, ttl = await pipe.execute()
    except RedisError as exc:
        logger.warning("OAuth rate limit not counted (Redis): %s", exc)
        return None
    if int(count) <= settings.oauth_rate_limit_per_ip:
        return None
    return max(int(ttl), 1)
