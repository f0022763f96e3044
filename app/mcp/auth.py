"""Bearer API-key authentication in front of the MCP transport (pure ASGI).

A request reaches the MCP SDK only with a valid, unrevoked key that has `read:data`;
its principal rides along in the ASGI scope state (`principal_of` reads it back in a
tool handler). Everything else (no key, a malformed, unknown or revoked key, a key
without the scope) is answered here: 403 with the reason in a JSON-RPC error (see
`_refuse` for why not 401).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api_keys.verify import ApiKeyPrincipal, averify_bearer
from app.errors import AppError, Forbidden, ServiceUnavailable, Unauthenticated
from app.http.errors import error_body, send_error

REQUIRED_SCOPE = "read:data"


class BearerKeyAuth:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] in ("GET", "DELETE"):
            # Stateless: no server-to-client stream to open (GET) and no session to end
            # (DELETE); a GET stream would otherwise stay open, even past key revocation.
            body = error_body("METHOD_NOT_ALLOWED", "This MCP endpoint takes POST only")
            await send_error(send, 405, body, {"Allow": "POST"})
            return
        authorization = _header(scope, b"authorization")
        try:
            principal = await averify_bearer(authorization)
            if REQUIRED_SCOPE not in principal.scopes:
                raise Forbidden(f"This API key lacks the {REQUIRED_SCOPE} scope")
        except AppError as exc:
            await _refuse(exc, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


def principal_of(request: Any) -> ApiKeyPrincipal:
    """The principal `BearerKeyAuth` put on this request (a Starlette request)."""
    principal = request.state.principal if isinstance(request, Request) else None
    if not isinstance(principal, ApiKeyPrincipal):
        raise Unauthenticated()
    return principal


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


# JSON-RPC's implementation-defined server error range; `data` is our error object.
KEY_REFUSED_RPC_CODE = -32001


async def _refuse(exc: AppError, send: Send) -> None:
    """403 with a JSON-RPC error body, never 401: MCP clients answer any 401 by starting
    OAuth discovery (Inspector asks for a TTY, mcp-remote tries client registration), and
    the person never sees why. A 403 without a challenge is shown as is, and a JSON-RPC
    error body is what the Python SDK reports; `data` carries `{"code", "message"}`."""
    if isinstance(exc, ServiceUnavailable):  # the key could not be checked: not a refusal
        headers = {"Retry-After": str(exc.details["retryAfterSeconds"])}
        await send_error(send, exc.status, exc.to_body(), headers)
        return
    error = exc.to_body()["error"]
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": KEY_REFUSED_RPC_CODE, "message": exc.message, "data": error},
    }
    await send_error(send, 403, body)
