"""The MCP endpoint's HTTP checks, answered before authentication and the SDK.

- **Host** (DNS rebinding): 421 unless it is one of `GEOSVC_ALLOWED_HOSTS` or the host of
  `GEOSVC_BASE_URL`. A pattern `name:*` matches `name` with a numeric port only (the
  SDK's own check takes any text after `name:`).
- **Origin**: a browser page of another site gets 403; no Origin (not a browser) passes.
- **Content-Type** of a POST: 415 unless `application/json`.

An unknown MCP-Protocol-Version is left to the SDK: it takes the request for the
per-request (2026-07-28) protocol, whose validation ladder the conformance suite checks
(the body's id echoed, the supported versions that protocol lists).

The SDK answers these three with a plain-text body ("Invalid Host header"), which an
MCP host shows as it is; here each refusal is a JSON-RPC error whose `data` is our error
object, like the authentication refusals (`app/mcp/auth.py`). The SDK's Host and Origin
checks are off (they compare case-sensitively); its Content-Type check never sees a
request refused here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from mcp_types.jsonrpc import INVALID_REQUEST
from starlette.types import ASGIApp, Receive, Scope, Send

from app.http.errors import send_error

_PORT = re.compile(r"[0-9]{1,5}")
_MAX_SHOWN = 100  # characters of a refused header value quoted back


class AllowList:
    """Exact values, and `prefix:*` patterns that match `prefix:<port>`; case-insensitive."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.exact: set[str] = set()
        self.any_port: set[str] = set()
        for entry in entries:
            entry = entry.lower()
            if entry.endswith(":*"):
                self.any_port.add(entry[:-2])
            else:
                self.exact.add(entry)

    def allows(self, value: str) -> bool:
        value = value.lower()
        if value in self.exact:
            return True
        prefix, colon, port = value.rpartition(":")
        return bool(colon) and prefix in self.any_port and _PORT.fullmatch(port) is not None


class TransportChecks:
    def __init__(
        self, app: ASGIApp, *, allowed_hosts: Iterable[str], allowed_origins: Iterable[str]
    ) -> None:
        self.app = app
        self.hosts = AllowList(allowed_hosts)
        self.origins = AllowList(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(_headers(scope), scope["method"])
            if refusal is not None:
                status, body = refusal
                await send_error(send, status, body)
                return
        await self.app(scope, receive, send)

    def _refusal(self, headers: dict[str, str], method: str) -> tuple[int, dict[str, Any]] | None:
        host = headers.get("host", "")
        if not self.hosts.allows(host):
            message = f"This MCP server does not answer to Host {_shown(host)}"
            return 421, _rpc_error("MISDIRECTED_REQUEST", message)
        origin = headers.get("origin")
        if origin is not None and not self.origins.allows(origin):
            message = f"Requests from web pages of Origin {_shown(origin)} are refused"
            return 403, _rpc_error("FORBIDDEN", message)
        content_type = headers.get("content-type", "")
        media_type = content_type.partition(";")[0].strip().lower()
        if method == "POST" and media_type != "application/json":
            message = (
                f"An MCP request's body is JSON: Content-Type {_shown(content_type)} "
                "must be application/json"
            )
            return 415, _rpc_error("UNSUPPORTED_MEDIA_TYPE", message)
        return None


# The headers these checks read, by raw name: no header of a request is decoded unless read.
_WANTED = {b"host": "host", b"origin": "origin", b"content-type": "content-type"}


def _headers(scope: Scope) -> dict[str, str]:
    """The headers these checks read; the first of a repeated one."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name = _WANTED.get(raw_name.lower())
        if name is not None and name not in found:
            found[name] = raw_value.decode("latin-1")
    return found


def _shown(value: str) -> str:
    return repr(value[:_MAX_SHOWN])


def _rpc_error(code: str, message: str) -> dict[str, Any]:
    data = {"code": code, "message": message}
    error = {"code": INVALID_REQUEST, "message": message, "data": data}
    return {"jsonrpc": "2.0", "id": None, "error": error}
