"""Bearer authentication in front of the MCP transport (pure ASGI): an API key or an
OAuth access token, one kind of principal either way.

A request reaches the MCP SDK only with a valid credential that has `read:data`; its
principal rides along in the ASGI scope state (`principal_of` reads it back in a tool
handler). Everything else is answered here:

- no credentials: 401 with `WWW-Authenticate: Bearer resource_metadata="..."`, where an
  MCP host starts OAuth discovery (RFC 9728, the MCP authorization specification);
- an access token that is unknown, expired, revoked or for another resource: 401 with
  `error="invalid_token"`, so the host refreshes it or signs in again;
- an API key (`svc_live_ak_...`) that is malformed, unknown or revoked: 403 with the
  reason in a JSON-RPC error, as before OAuth (see `_refuse_key` for why not 401).

Every refusal carries a JSON-RPC error body naming the reason, for people reading it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api_keys.verify import KEY_PREFIXES, averify_bearer
from app.http.errors import error_body, send_error
from app.kit.config import get_settings
from app.kit.credentials import ONE_AUTHORIZATION, bearer_credential
from app.kit.errors import AppError, Forbidden, ServiceUnavailable, Unauthenticated
from app.kit.principal import CallerPrincipal
from app.oauth.metadata import resource_metadata_url
from app.oauth.verify import averify_access_token
from app.request_log.service import MCP_SURFACE

REQUIRED_SCOPE = "read:data"

# JSON-RPC's implementation-defined server error range; `data` is our error object.
KEY_REFUSED_RPC_CODE = -32001

SIGN_IN_REQUIRED = (
    "Sign-in required: MCP hosts connect with OAuth (they open a browser to sign in and "
    "approve); other clients send an API key as `Authorization: Bearer svc_live_ak_...`"
)


class BearerAuth:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if sum(key == b"authorization" for key, _ in scope["headers"]) > 1:
            await _challenge(send, Unauthenticated(ONE_AUTHORIZATION), error="invalid_request")
            return
        # only HTTP's whitespace is trimmed: the credential is read as app/kit/credentials.py says
        authorization = (_header(scope, b"authorization") or "").strip(" \t")
        if not authorization:
            await _challenge(send, Unauthenticated(SIGN_IN_REQUIRED))
            return
        if scope["method"] in ("GET", "DELETE"):
            # Stateless: no server-to-client stream to open (GET) and no session to end
            # (DELETE); a GET stream would otherwise stay open, even past revocation.
            body = error_body("METHOD_NOT_ALLOWED", "This MCP endpoint takes POST only")
            await send_error(send, 405, body, {"Allow": "POST"})
            return
        credential = bearer_credential(authorization)
        if credential is None:
            message = "The Authorization header must be `Bearer <access token or API key>`"
            await _challenge(send, Unauthenticated(message), error="invalid_request")
            return
        if credential.startswith(KEY_PREFIXES):
            principal = await _key_principal(authorization, send)
        else:
            principal = await _token_principal(credential, send)
        if principal is None:
            return
        scope.setdefault("state", {})["principal"] = replace(principal, surface=MCP_SURFACE)
        await self.app(scope, receive, send)


async def _key_principal(authorization: str, send: Send) -> CallerPrincipal | None:
    try:
        principal = await averify_bearer(authorization)
        if REQUIRED_SCOPE not in principal.scopes:
            raise Forbidden(f"This API key lacks the {REQUIRED_SCOPE} scope")
    except AppError as exc:
        await _refuse_key(exc, send)
        return None
    return principal


async def _token_principal(token: str, send: Send) -> CallerPrincipal | None:
    try:
        principal = await averify_access_token(token)
    except ServiceUnavailable as exc:
        await _unavailable(exc, send)
        return None
    except AppError as exc:
        await _challenge(send, exc, error="invalid_token")
        return None
    if REQUIRED_SCOPE not in principal.scopes:
        refusal = Forbidden(f"This access token lacks the {REQUIRED_SCOPE} scope")
        await _challenge(send, refusal, error="insufficient_scope", status=403)
        return None
    return principal


def principal_of(request: Any) -> CallerPrincipal:
    """The principal `BearerAuth` put on this request (a Starlette request)."""
    principal = request.state.principal if isinstance(request, Request) else None
    if not isinstance(principal, CallerPrincipal):
        raise Unauthenticated()
    return principal


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _rpc_error(exc: AppError) -> dict[str, Any]:
    error = exc.to_body()["error"]
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": KEY_REFUSED_RPC_CODE, "message": exc.message, "data": error},
    }


def _quoted(text: str) -> str:
    return text.replace("\\", "").replace('"', "'")


async def _challenge(
    send: Send, exc: AppError, *, error: str | None = None, status: int = 401
) -> None:
    """RFC 6750 / RFC 9728: where to find the metadata that starts the OAuth flow."""
    parts = [f'resource_metadata="{resource_metadata_url(get_settings())}"']
    parts.append(f'scope="{REQUIRED_SCOPE}"')
    if error:
        parts += [f'error="{error}"', f'error_description="{_quoted(exc.message)}"']
    headers = {"WWW-Authenticate": "Bearer " + ", ".join(parts)}
    await send_error(send, status, _rpc_error(exc), headers)


async def _unavailable(exc: ServiceUnavailable, send: Send) -> None:
    """The credential could not be checked: not a refusal."""
    headers = {"Retry-After": str(exc.details["retryAfterSeconds"])}
    await send_error(send, exc.status, exc.to_body(), headers)


async def _refuse_key(exc: AppError, send: Send) -> None:
    """403 with a JSON-RPC error body, never 401: MCP clients answer any 401 by starting
    OAuth discovery (Inspector asks for a TTY, mcp-remote tries client registration), and
    the person with a wrong key never sees why. A 403 without a challenge is shown as is,
    and a JSON-RPC error body is what the Python SDK reports; `data` carries
    `{"code", "message"}`."""
    if isinstance(exc, ServiceUnavailable):
        await _unavailable(exc, send)
        return
    await send_error(send, 403, _rpc_error(exc))
