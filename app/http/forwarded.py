"""Headers a reverse proxy sets, honoured only from the proxy (GEOSVC_FORWARDED_ALLOW_IPS).

`X-Forwarded-For` and `X-Forwarded-Proto` say which client and scheme the proxy saw, and
`X-Proxy-Request-ID` names one client request across nginx's attempts, so a retry is not
charged again (app/metering/retries.py). From anyone else they are whatever the caller
chose: its own client address (to escape every per-address limit: sign-up, sign-in,
/register) or a retry id (to have its repeats answered free). So a request whose peer is
not one of the configured proxies has them removed before any route or log sees it, and
one from a proxy has the client address and scheme applied (uvicorn's own middleware,
which picks the last address the proxies did not add).

None is trusted unless configured: `geosvc dev`, a bare `geosvc api` and any other server
then take every request as coming from its peer. uvicorn's own proxy handling is off
(`uvicorn_options`), because it replaces the peer's address before the app sees it, and
the retry id must be checked against the peer itself.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.kit.config import get_settings

# Only a proxy may set these; `Forwarded` (RFC 7239) and `X-Real-IP` are read by nothing
# here, but are dropped too so no later reader trusts them by mistake.
PROXY_ONLY_HEADERS = frozenset(
    {
        b"x-forwarded-for",
        b"x-forwarded-proto",
        b"x-forwarded-host",
        b"x-forwarded-port",
        b"x-real-ip",
        b"forwarded",
        b"x-proxy-request-id",
    }
)


def proxy_addresses(setting: str) -> list[str]:
    """GEOSVC_FORWARDED_ALLOW_IPS as a list (empty: no proxy)."""
    return [part.strip() for part in setting.split(",") if part.strip()]


@cache
def _configured_proxies() -> Any:  # uvicorn's _TrustedHosts
    proxies = proxy_addresses(get_settings().forwarded_allow_ips)
    return ProxyHeadersMiddleware(None, proxies).trusted_hosts  # type: ignore[arg-type]


def is_configured_proxy(host: str) -> bool:
    """Whether `host` is one of GEOSVC_FORWARDED_ALLOW_IPS, matched as uvicorn matches them
    (hosts and networks)."""
    return host in _configured_proxies()


class ForwardedHeaders:
    """The outermost middleware: proxy headers applied from a proxy, dropped otherwise."""

    def __init__(self, app: ASGIApp, allow_ips: str | None = None) -> None:
        self.app = app
        proxies = proxy_addresses(
            get_settings().forwarded_allow_ips if allow_ips is None else allow_ips
        )
        self._from_proxy = ProxyHeadersMiddleware(app, proxies)  # type: ignore[arg-type]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        peer = scope.get("client")
        if peer is not None and peer[0] in self._from_proxy.trusted_hosts:
            await self._from_proxy(scope, receive, send)  # type: ignore[arg-type]
            return
        scope["headers"] = [
            (name, value) for name, value in scope["headers"] if name not in PROXY_ONLY_HEADERS
        ]
        await self.app(scope, receive, send)
