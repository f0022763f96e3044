"""How often map links (app/tool_calls/images.py) may be fetched. A link needs no key and
costs no credit, so whoever holds one could otherwise draw the same image from us without
end. Two budgets, both counted in Redis so every api process shares them:

- per client address: GEOSVC_MAP_LINK_FETCHES_PER_IP requests per
  GEOSVC_MAP_LINK_FETCH_WINDOW_S, every request counted (a 404 too: guessing ids or
  signatures is a fetch like any other). IPv6 addresses count per /64, what one
  subscriber is usually given. The address is uvicorn's, which applies X-Forwarded-For
  only from GEOSVC_FORWARDED_ALLOW_IPS (the proxy).
- per link: GEOSVC_MAP_LINK_FETCHES_PER_LINK answered fetches in the link's whole life
  (at most GEOSVC_MAP_LINK_TTL_S), counted only once the signature or the owner's key
  was accepted, so nobody without the link can spend its budget.

Over either, RateLimited (429 with Retry-After: the seconds until the window, or the
link, ends).
"""

from __future__ import annotations

import hashlib
import ipaddress

from app.kit.config import get_settings
from app.kit.errors import RateLimited
from app.kit.redis_client import async_redis


def address_group(client_ip: str) -> str:
    """The address as counted: an IPv6 address by its /64, anything else as it is."""
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return client_ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # an IPv4 client of a dual-stack socket
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def _address_key(client_ip: str) -> str:
    digest = hashlib.sha256(address_group(client_ip).encode()).hexdigest()[:32]
    return f"{get_settings().redis_key_prefix}map-link-fetches:address:{digest}"


def _link_key(image_id: str) -> str:
    return f"{get_settings().redis_key_prefix}map-link-fetches:link:{image_id}"


async def count_in_window(key: str, window_s: int) -> tuple[int, int]:
    """One more in `key`'s window (started by its first count): (count, seconds left)."""
    pipe = async_redis().pipeline(transaction=False)
    pipe.incr(key)
    pipe.expire(key, window_s, nx=True)
    pipe.ttl(key)
    count, _set, ttl = await pipe.execute()
    return int(count), max(int(ttl), 1)


async def count_address(client_ip: str) -> None:
    """Count a fetch from `client_ip`; RateLimited over its budget."""
    settings = get_settings()
    count, left_s = await count_in_window(_address_key(client_ip), settings.map_link_fetch_window_s)
    if count > settings.map_link_fetches_per_ip:
        raise RateLimited(
            f"Too many map image fetches from your address: at most "
            f"{settings.map_link_fetches_per_ip} per {settings.map_link_fetch_window_s} s; "
            f"retry in {left_s} s.",
            retryAfterSeconds=left_s,
        )


async def count_link(image_id: str, life_s: int) -> None:
    """Count an answered fetch of `image_id`, which is kept `life_s` more seconds;
    RateLimited once its life's budget is spent (the count ends with the link)."""
    settings = get_settings()
    count, left_s = await count_in_window(_link_key(image_id), life_s)
    if count > settings.map_link_fetches_per_link:
        raise RateLimited(
            f"This map link has been fetched {settings.map_link_fetches_per_link} times, "
            "all it may be: draw the map again for a new link (or keep the image you "
            "fetched).",
            retryAfterSeconds=left_s,
        )
