"""A nesting limit for every JSON body, at the edge (issue 36, item 8).

Python's json module (and the MCP SDK and pydantic over it) recurses once per level: a
body nested a few thousand deep raised RecursionError deep inside a route, a 500. This
pure ASGI layer reads the body first (RequestLimits, outside it, has bounded its size)
and refuses one nested deeper than `MAX_JSON_DEPTH` in the envelope of the surface
asked: OAuth's `invalid_client_metadata` at /register and a JSON-RPC parse error at /mcp
(400), the spec's `{"error": {"code": "MALFORMED_JSON", ...}}` everywhere else (422 on
the control plane, 400 on /v1, as any malformed JSON body). Form
bodies are not JSON and pass untouched, as do bodies with fewer brackets than the limit
(one count in C); only the rest are scanned, brackets inside strings not counted.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.errors import bad_input_status, error_body, send_error
from app.oauth.metadata import REGISTER_PATH

MAX_JSON_DEPTH = 64
TOO_DEEP = f"The JSON body is nested more than {MAX_JSON_DEPTH} levels deep"
_NOT_JSON = (b"application/x-www-form-urlencoded", b"multipart/form-data")
# A string (an unterminated one runs to the end: every match is linear) or one bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")
_QUOTE = ord('"')


def too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `body`, read as JSON, opens more than `limit` arrays or objects at once."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for match in _TOKENS.finditer(body):
        first = match.group()[0]
        if first == _QUOTE:
            continue
        if first in _OPENING:
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(0, depth - 1)
    return False


def _refusal(path: str) -> dict[str, Any]:
    if path == REGISTER_PATH:
        return {"error": "invalid_client_metadata", "error_description": TOO_DEEP}
    if path == "/mcp" or path.startswith("/mcp/"):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": TOO_DEEP}}
    return error_body("MALFORMED_JSON", TOO_DEEP)


def _status(path: str) -> int:
    """400 at /register and /mcp (their protocols'), else as any malformed JSON body."""
    if path == REGISTER_PATH or path == "/mcp" or path.startswith("/mcp/"):
        return 400
    return bad_input_status(path)


class JsonDepthLimit:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        content_type = dict(scope["headers"]).get(b"content-type", b"").lower()
        if content_type.startswith(_NOT_JSON):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:  # the whole body (at most RequestLimits' limit), or up to a disconnect
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        if too_deep(body):
            # /register allows any origin (app.oauth.endpoints): so does its refusal
            headers = {"Cache-Control": "no-store", "Access-Control-Allow-Origin": "*"}
            if scope["path"] != REGISTER_PATH:
                del headers["Access-Control-Allow-Origin"]
            await send_error(send, _status(scope["path"]), _refusal(scope["path"]), headers)
            return
        whole = {"type": "http.request", "body": body, "more_body": False}
        replay = [whole] + [m for m in messages if m["type"] != "http.request"]

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)
