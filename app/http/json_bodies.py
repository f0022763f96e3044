"""Limits for every JSON body, at the edge (`app.kit.json_text`: too deep, or half a
surrogate pair).

This pure ASGI layer reads the body first (RequestLimits, outside it, has bounded its
size) and refuses one the json module would take but the service cannot, in the
envelope of the surface asked: OAuth's `invalid_client_metadata` at /register and a
JSON-RPC parse error at /mcp (400), the spec's `{"error": {"code": "MALFORMED_JSON",
...}}` everywhere else (422 on the control plane, 400 on /v1, as any malformed JSON
body). Form bodies are not JSON and pass untouched; a body with fewer brackets than the
depth limit and no surrogate escape costs two counts and one search in C.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.errors import bad_input_status, error_body, send_error
from app.kit.json_text import json_problem

_NOT_JSON = (b"application/x-www-form-urlencoded", b"multipart/form-data")


def _refusal(path: str, problem: str, register_path: str) -> dict[str, Any]:
    message = f"The JSON body {problem}"
    if path == register_path:
        return {"error": "invalid_client_metadata", "error_description": message}
    if path == "/mcp" or path.startswith("/mcp/"):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}}
    return error_body("MALFORMED_JSON", message)


def _status(path: str, register_path: str) -> int:
    """400 at /register and /mcp (their protocols'), else as any malformed JSON body."""
    if path == register_path or path == "/mcp" or path.startswith("/mcp/"):
        return 400
    return bad_input_status(path)


class JsonBodyLimits:
    def __init__(self, app: ASGIApp, *, register_path: str) -> None:
        """`register_path`: OAuth's client registration (app.oauth.metadata.REGISTER_PATH),
        given by the app so this edge layer imports no feature."""
        self.app = app
        self.register_path = register_path

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
        problem = json_problem(body)
        if problem is not None:
            path = scope["path"]
            # /register allows any origin (app.oauth.endpoints): so does its refusal
            headers = {"Cache-Control": "no-store", "Access-Control-Allow-Origin": "*"}
            if path != self.register_path:
                del headers["Access-Control-Allow-Origin"]
            status = _status(path, self.register_path)
            await send_error(send, status, _refusal(path, problem, self.register_path), headers)
            return
        whole = {"type": "http.request", "body": body, "more_body": False}
        replay = [whole] + [m for m in messages if m["type"] != "http.request"]

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)
