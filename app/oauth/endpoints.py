"""The OAuth HTTP endpoints a client calls directly: discovery documents, token,
registration and revocation. (The authorization endpoint is the consent page, a
dashboard page: app/dashboard/consent_page.py.)

These answer in OAuth's own error format (`{"error": "invalid_grant",
"error_description": ...}`, RFC 6749 section 5.2, RFC 7591, RFC 7009), which OAuth
clients parse, not the service's `{"error": {"code", "message"}}`. They authenticate no
cookie, so they allow any origin (browser-based MCP clients call them) and are exempt
from the cross-site guard.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import anyio.to_thread
from authlib.oauth2.rfc6749 import OAuth2Error
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from app.deps.client import client_ip_of
from app.kit.config import get_settings
from app.kit.db import new_session
from app.oauth import grants, metadata, rate_limit
from app.oauth.requests import HttpRequest, OAuthResponse, unsafe_parameter
from app.oauth.server import OAuthServer
from app.oauth.verify import note_tokens_revoked

router = APIRouter(include_in_schema=False)

CORS = {"Access-Control-Allow-Origin": "*"}
PREFLIGHT = {
    **CORS,
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "86400",
}
MAX_FORM_FIELDS = 32
MAX_REGISTRATION_BYTES = 16 * 1024
CORS_PATHS = (
    metadata.AS_METADATA_PATH,
    metadata.RESOURCE_METADATA_PATH,
    metadata.ROOT_RESOURCE_METADATA_PATH,
    metadata.TOKEN_PATH,
    metadata.REGISTER_PATH,
    metadata.REVOKE_PATH,
)


def oauth_error(status: int, error: str, description: str) -> JSONResponse:
    body = {"error": error, "error_description": description}
    return JSONResponse(body, status, headers={**CORS, "Cache-Control": "no-store"})


def _discovery(body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, headers={**CORS, "Cache-Control": "public, max-age=300"})


@router.get(metadata.AS_METADATA_PATH)
def authorization_server_metadata() -> JSONResponse:
    return _discovery(metadata.authorization_server_metadata(get_settings()))


@router.get(metadata.RESOURCE_METADATA_PATH)
@router.get(metadata.ROOT_RESOURCE_METADATA_PATH)
def protected_resource_metadata() -> JSONResponse:
    return _discovery(metadata.protected_resource_metadata(get_settings()))


for _path in CORS_PATHS:
    router.add_api_route(
        _path, lambda: Response(status_code=204, headers=PREFLIGHT), methods=["OPTIONS"]
    )


def _as_response(answer: OAuthResponse) -> Response:
    headers = {**dict(answer.headers), **CORS}
    headers.pop("Content-Type", None)
    return JSONResponse(answer.body, answer.status, headers=headers)


# A code or refresh token presented twice at once: the first answer is withdrawn too
REPLAYED = "The grant was presented more than once; every token it gave is revoked"


def _answer(http: HttpRequest, respond: Callable[[OAuthServer], OAuthResponse]) -> Response:
    """Run one endpoint of a fresh server in its own database session; commit on success."""
    with new_session() as session:
        server = OAuthServer(session)
        try:
            answer = respond(server)
        except OAuth2Error as error:  # raised before Authlib's own handling (e.g. transport)
            answer = OAuthResponse(*error())
        if answer.status < 400:
            session.commit()
            note_tokens_revoked(server.revoked_access_hashes)
            if server.issued_from is not None and grants.revoke_if_replayed(server.issued_from):
                return oauth_error(400, "invalid_grant", REPLAYED)
    return _as_response(answer)


async def _form(request: Request) -> list[tuple[str, str]] | JSONResponse:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        return oauth_error(
            400, "invalid_request", "Send the parameters as application/x-www-form-urlencoded"
        )
    try:
        text = (await request.body()).decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except (UnicodeDecodeError, ValueError):
        return oauth_error(400, "invalid_request", "The form body is not valid")
    unsafe = unsafe_parameter(pairs)
    if unsafe is not None:
        return oauth_error(400, "invalid_request", f"The {unsafe} parameter is not valid")
    return pairs


async def _over_rate(request: Request, endpoint: str) -> JSONResponse | None:
    """429 over the per-address rate of `endpoint` (app/oauth/rate_limit.py)."""
    wait = await rate_limit.retry_after(endpoint, client_ip_of(request.client))
    if wait is None:
        return None
    refusal = oauth_error(
        429, "temporarily_unavailable", f"Too many requests from your address; retry in {wait} s"
    )
    refusal.headers["Retry-After"] = str(wait)
    return refusal


def _http(request: Request, pairs: list[tuple[str, str]], json_body: Any = None) -> HttpRequest:
    return HttpRequest(request.method, str(request.url), request.headers, pairs, json_body)


@router.post(metadata.TOKEN_PATH)
async def token(request: Request) -> Response:
    refused = await _over_rate(request, "token")
    if refused is not None:
        return refused
    pairs = await _form(request)
    if isinstance(pairs, JSONResponse):
        return pairs
    http = _http(request, pairs)
    return await anyio.to_thread.run_sync(
        _answer, http, lambda server: server.create_token_response(http)
    )


@router.post(metadata.REVOKE_PATH)
async def revoke(request: Request) -> Response:
    pairs = await _form(request)
    if isinstance(pairs, JSONResponse):
        return pairs
    http = _http(request, pairs)
    return await anyio.to_thread.run_sync(
        _answer, http, lambda server: server.create_endpoint_response("revocation", http)
    )


@router.post(metadata.REGISTER_PATH)
async def register(request: Request) -> Response:
    """Dynamic client registration (RFC 7591), limited per client address."""
    refused = await _over_rate(request, "register")
    if refused is not None:
        return refused
    body = await request.body()
    if len(body) > MAX_REGISTRATION_BYTES:
        return oauth_error(
            400, "invalid_client_metadata", f"At most {MAX_REGISTRATION_BYTES} bytes of metadata"
        )
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        return oauth_error(400, "invalid_client_metadata", "Send the metadata as a JSON object")
    http = _http(request, [], document)
    return await anyio.to_thread.run_sync(
        _answer, http, lambda server: server.create_endpoint_response("client_registration", http)
    )
