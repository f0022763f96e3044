"""How many tiles one account and one client address may fetch. Tiles cost no credit
(docs/HTTP_API.md, "Map tiles": they come free with the map call that granted them), so
two budgets in Redis, shared by every api process, bound what anyone draws from us:

- per account: GEOSVC_TILE_FETCHES_PER_ACCOUNT per GEOSVC_TILE_FETCH_WINDOW_S, counted
  for fetches with the account's key or a URL signed for it;
- per client address: GEOSVC_TILE_FETCHES_PER_IP per window, every request counted (a
  bad signature too), IPv6 by /64 as map links are (app/tool_calls/link_budget.py).

Over either: RateLimited, 429 with Retry-After (the seconds until the window ends). A
map view of 1280x800 px shows about 24 tiles; panning and zooming a few times, 100-200.
"""

from __future__ import annotations

import hashlib

from app.kit.config import get_settings
from app.kit.errors import RateLimited
from app.observability import metrics
from app.tool_calls.link_budget import address_group, count_in_window


async def count_address(client_ip: str) -> None:
    settings = get_settings()
    digest = hashlib.sha256(address_group(client_ip).encode()).hexdigest()[:32]
    key = f"{settings.redis_key_prefix}tile-fetches:address:{digest}"
    count, left_s = await count_in_window(key, settings.tile_fetch_window_s)
    if count > settings.tile_fetches_per_ip:
        metrics.tile_refused("address")
        raise RateLimited(
            f"Too many tile fetches from your address: at most {settings.tile_fetches_per_ip} "
            f"per {settings.tile_fetch_window_s} s; retry in {left_s} s.",
            retryAfterSeconds=left_s,
        )


async def count_account(account: str) -> None:
    settings = get_settings()
    # the account's hash tag: its keys share a Redis Cluster slot (docs/DESIGN.md)
    key = f"{settings.redis_key_prefix}tile-fetches:{{{account}}}"
    count, left_s = await count_in_window(key, settings.tile_fetch_window_s)
    if count > settings.tile_fetches_per_account:
        metrics.tile_refused("account")
        raise RateLimited(
            f"This account fetched {settings.tile_fetches_per_account} tiles in "
            f"{settings.tile_fetch_window_s} s, all it may; retry in {left_s} s.",
            retryAfterSeconds=left_s,
        )
