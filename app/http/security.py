"""Cross-site request refusal for the cookie-authenticated control plane.

A pure ASGI middleware (no per-request task overhead on /mcp, which uses bearer keys and
the MCP SDK's own transport security instead).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from app.http.errors import error_body, send_error
from app.kit.config import get_settings

_STATE_CHANGING = frozenset({b"POST", b"PUT", b"PATCH", b"DELETE"})
# Stripe calls its webhook cross-site by design; the signature authenticates it. /mcp and
# /v1 take a bearer key, which a browser never sends by itself. OAuth clients (browser-based
# ones too) call the token, registration and revocation endpoints from their own origin,
# authenticated by what they send, never by our cookie. Not the authorization endpoint: its
# POST is the consent form, cookie-authenticated.
_EXEMPT_PREFIXES = ("/mcp", "/v1/", "/billing/webhooks/")
_EXEMPT_PATHS = frozenset({"/token", "/register", "/revoke"})


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class CrossSiteGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.trusted = {_origin_of(get_settings().base_url)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"].encode() not in _STATE_CHANGING:
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path.startswith(_EXEMPT_PREFIXES) or path in _EXEMPT_PATHS or self._same_site(scope):
            await self.app(scope, receive, send)
            return
        await send_error(send, 403, error_body("FORBIDDEN", "Cross-site request refused"))

    def _same_site(self, scope: Scope) -> bool:
        headers = dict(scope["headers"])
        if headers.get(b"sec-fetch-site") == b"cross-site":
            return False
        origin = headers.get(b"origin")
        if origin is None:  # not a browser cross-site form/fetch (curl, server-side clients)
            return True
        origin_text = origin.decode("latin-1").lower()
        host = headers.get(b"host", b"").decode("latin-1").lower()
        own = f"{scope.get('scheme', 'http')}://{host}"
        return origin_text == own or origin_text in self.trusted
