"""Signed tile URLs, for a map in a page that must not hold an API key (the MCP App's
sandboxed iframe). A map call hands out a URL template,
`/v1/tiles/{z}/{x}/{y}.png?account=<usr_...>&expires=<unix s>&signature=<hex>`, good for
`tile_link_ttl_s`: HMAC-SHA256 with the server's pepper over the account and the expiry
(one signature serves every tile, as a template must). Tiles are not private (they are
the same for everyone); the signature decides whose tile budget a fetch counts against.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from urllib.parse import urlencode

from app.kit import secret_keys
from app.kit.config import get_settings
from app.kit.errors import Forbidden, InvalidArgument
from app.kit.validation import ascii_digits
from app.tiles.grid import TILE_ATTRIBUTION, TILE_MAX_ZOOM

TILES_PATH = "/v1/tiles"
_ACCOUNT = re.compile(r"^usr_[A-Za-z0-9]{1,64}$")
_SIGNATURE = re.compile(r"^[0-9a-f]{64}$")
SIGNED_PARAMS = ("account", "expires", "signature")


@dataclass(frozen=True)
class TileGrant:
    url_template: str  # {z}, {x} and {y} to fill in, as Leaflet and MapLibre take it
    expires_at: int  # Unix seconds
    max_zoom: int
    attribution: str = TILE_ATTRIBUTION


def _signature(account: str, expires_at: int, pepper: bytes | None = None) -> str:
    message = f"tiles:{account}:{expires_at}".encode()  # "tiles:": no other link's signature
    key = pepper if pepper is not None else secret_keys.pepper(get_settings())
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def grant(account: str, *, now: float | None = None) -> TileGrant:
    settings = get_settings()
    expires_at = int(now if now is not None else time.time()) + settings.tile_link_ttl_s
    base = settings.base_url.rstrip("/")
    template = _url_template(base, secret_keys.pepper(settings), account, expires_at)
    return TileGrant(template, expires_at, TILE_MAX_ZOOM)


@functools.lru_cache(maxsize=1024)
def _url_template(base: str, pepper: bytes, account: str, expires_at: int) -> str:
    """Every map answer carries one: an account's answers within the same second share
    it, signed once (an HMAC and a URL encoding: about 1.5 % of the api's CPU a call)."""
    signature = _signature(account, expires_at, pepper)
    query = urlencode({"account": account, "expires": expires_at, "signature": signature})
    return f"{base}{TILES_PATH}/{{z}}/{{x}}/{{y}}.png?{query}"


def signed_account(account: str | None, expires: str | None, signature: str | None) -> str:
    """The account a signed tile URL was granted to; Forbidden when a part is missing, the
    signature is not ours or the URL expired; InvalidArgument for a malformed part."""
    if account is None or expires is None or signature is None:
        raise Forbidden("This tile URL is not signed: ask for a map again for a new one.")
    expires_at = ascii_digits(expires)
    if expires_at is None:
        raise InvalidArgument("This tile URL's expires is malformed.", field="expires")
    for name, value, pattern in (
        ("account", account, _ACCOUNT),
        ("signature", signature, _SIGNATURE),
    ):
        if not pattern.match(value):
            raise InvalidArgument(f"This tile URL's {name} is malformed.", field=name)
    if not hmac.compare_digest(_signature(account, expires_at), signature):
        raise Forbidden("This tile URL's signature is not valid.")
    if expires_at < time.time():
        raise Forbidden(
            "This tile URL expired: draw the map again (static_map, geocode, ...) for a new one.",
            expiredAt=expires_at,
        )
    return account
