"""2025-11-25's `notifications/tasks/status`, where a stream is open.

The transport answers each request with one JSON response (stateless, any replica), and
GET streams are refused (`app.mcp.auth`), so the one stream a 2025-11-25 client can hold
open is the answer to its `tasks/result`, which waits for the task to end. When that
client accepts `text/event-stream`, `TaskResultStreams` sends the request to a second,
SSE-answering transport over the same server: the handler then pushes a
`notifications/tasks/status` (the whole `Task`, as `tasks/get` answers it) on each change
of status or progress, and the result last. A client that accepts JSON only, every other
request and the 2026-07-28 generation (its `subscriptions/listen`: `app.mcp.task_listen`)
are answered as before. The status is read from the database, so the stream is served by
whichever replica holds it, whichever worker runs the rows.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.kit.principal import CallerPrincipal
from app.mcp.task_results import read_task
from app.mcp.task_wire import TaskState

# tasks/result waits for the end by reading the job this often.
RESULT_POLL_S = 0.5
STREAM_KEY = "task_status_stream"


class TaskResultStreams:
    """A 2025-11-25 `tasks/result` from a client that takes SSE to `streamed` (an SSE
    transport); everything else to `app` (JSON responses). Sits behind `ClientGoneWatch`,
    which has read the whole body and hands it over in one message."""

    def __init__(self, app: ASGIApp, streamed: ASGIApp) -> None:
        self.app = app
        self.streamed = streamed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _legacy_sse(scope):
            await self.app(scope, receive, send)
            return
        first = await receive()
        body = first.get("body", b"") if first["type"] == "http.request" else b""
        replayed = _replay(first, receive)
        if first.get("more_body") or not _is_task_result(body):
            await self.app(scope, replayed, send)
            return
        scope.setdefault("state", {})[STREAM_KEY] = True
        await self.streamed(scope, replayed, send)


async def until_ended(
    ctx: ServerRequestContext[Any], principal: CallerPrincipal, task_id: str
) -> TaskState:
    """The task once it has ended; on a stream, its status sent at each change."""
    streamed = isinstance(ctx.request, Request) and ctx.request.scope.get("state", {}).get(
        STREAM_KEY
    )
    reported: tuple[str, str] | None = None
    while True:
        state = await read_task(principal, task_id)
        if streamed and (state.status, state.status_message) != reported:
            reported = (state.status, state.status_message)
            notification = types.TaskStatusNotification(
                params=types.TaskStatusNotificationParams.model_validate(state.legacy())
            )
            await ctx.session.send_notification(
                notification,  # type: ignore[arg-type]  # not in the SDK's union, sent as is
                related_request_id=ctx.request_id,
            )
        if state.terminal:
            return state
        await anyio.sleep(RESULT_POLL_S)


def _legacy_sse(scope: Scope) -> bool:
    """A 2025-era request (no version header, or a handshake version) accepting SSE."""
    version = accept = None
    for key, value in scope["headers"]:
        if key == b"mcp-protocol-version":
            version = value.decode("latin-1")
        elif key == b"accept":
            accept = value.decode("latin-1")
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return False
    return accept is not None and "text/event-stream" in accept.lower()


def _is_task_result(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "tasks/result"


def _replay(first: Message, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return first
        return await receive()

    return replayed
