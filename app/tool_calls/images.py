"""Big static maps as links: an image larger than `map_inline_max_bytes` (as base64) is
kept in Redis for `map_link_ttl_s` and an MCP answer gives a `resource_link` to it instead
of the image (hosts cap a tool result around 1 MB).

The image is written in the same pipelined round trip as the call's commit (no Redis
call of its own), and fetching it costs no credit: the call that drew it paid. The URL,
`/v1/static-map/images/<id>?expires=..&signature=..`, is signed (HMAC-SHA256 with the
server's pepper over the id, the owner and the expiry): anyone holding it may fetch the
image until it expires, as a host does without our key. Without the signature, only the
owning account's key may (`Authorization: Bearer`, as any /v1 call); another account's key
gets 404, as for an image that does not exist or expired. Fetches are limited per link
and per client address (app/tool_calls/link_budget.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from urllib.parse import urlencode

from redis.asyncio.client import Pipeline as AsyncPipeline

from app.kit import secret_keys
from app.kit.config import get_settings
from app.kit.errors import NotFound
from app.kit.redis_client import async_redis
from app.kit.validation import ascii_digits
from app.metering.service import AlsoWrite
from app.tool_calls import link_budget

IMAGES_PATH = "/v1/static-map/images"
_IMAGE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # secrets.token_urlsafe's alphabet
GONE = "No such map image: it expired (links last {ttl} s) or was never drawn for this key."


@dataclass(frozen=True)
class ImageLink:
    url: str
    expires_at: int  # Unix seconds
    size: int  # bytes of the PNG


def needs_link(png_base64: str | None) -> bool:
    return png_base64 is not None and len(png_base64) > get_settings().map_inline_max_bytes


def _key(image_id: str) -> str:
    return f"{get_settings().redis_key_prefix}map-image:{image_id}"


def _signature(image_id: str, owner: str, expires_at: int) -> str:
    message = f"{image_id}:{owner}:{expires_at}".encode()
    return hmac.new(secret_keys.pepper(get_settings()), message, hashlib.sha256).hexdigest()


def keep(owner: str, png_base64: str) -> tuple[ImageLink, AlsoWrite]:
    """A link to the image, and the write that keeps it (for the commit's pipeline)."""
    settings = get_settings()
    image_id = secrets.token_urlsafe(16)
    expires_at = int(time.time()) + settings.map_link_ttl_s
    query = urlencode({"expires": expires_at, "signature": _signature(image_id, owner, expires_at)})
    url = f"{settings.base_url.rstrip('/')}{IMAGES_PATH}/{image_id}?{query}"
    size = len(png_base64) * 3 // 4 - png_base64[-2:].count("=")

    def write(pipe: AsyncPipeline) -> None:
        pipe.set(_key(image_id), f"{owner} {png_base64}", px=settings.map_link_ttl_s * 1000)

    return ImageLink(url, expires_at, size), write


async def fetch(
    image_id: str,
    *,
    owner: str | None = None,
    expires: str | None = None,
    signature: str | None = None,
) -> bytes:
    """The PNG, for its owner (`owner`: the caller's account) or a valid signature;
    NotFound otherwise (never saying which: an id is no clue to someone else's image).
    RateLimited over the link's budget (app/tool_calls/link_budget.py); the caller counts
    the client's address first."""
    gone = NotFound(GONE.format(ttl=get_settings().map_link_ttl_s))
    if not _IMAGE_ID.match(image_id):
        raise gone
    pipe = async_redis().pipeline(transaction=False)
    pipe.get(_key(image_id))
    pipe.ttl(_key(image_id))
    stored, life_s = await pipe.execute()
    if stored is None:
        raise gone
    stored_owner, png_base64 = str(stored).split(" ", 1)
    expires_at = ascii_digits(expires or "")
    if signature is not None and expires_at is not None:
        expected = _signature(image_id, stored_owner, expires_at)
        if expires_at < time.time() or not hmac.compare_digest(expected, signature):
            raise gone
    elif owner != stored_owner:
        raise gone
    await link_budget.count_link(image_id, max(int(life_s), 1))
    return base64.b64decode(png_base64)
