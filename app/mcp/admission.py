"""Admit a tool call at the edge, before the MCP machinery.

A `tools/call` is admitted (validated, rate, concurrency and credits checked: one Redis
call) from its request body alone. A refusal is answered right here with the same
FORBIDDEN (e-mail not confirmed), RATE_LIMITED or QUOTA_EXCEEDED result the tool handler
would give, for about a fifth of
the api CPU of a full MCP exchange (measured: 0.7 ms against 5 ms), and the connection's
next request is read only once the refusal's wait is over (`app.http.server`), so a
client that floods the service with refused calls does not crowd other customers' calls
out of the event loop. An admitted call goes on to the MCP server, its body replayed and its
admission in the ASGI scope for the tool handler (`claim`); one that `call_tool` never
settled (the MCP layer refused the request, or the client left first) is released
here, and so is UNAVAILABLE when Redis or the database cannot admit it (asked once, not
again by the handler). For a call answered with data, `call_tool` writes the commit to
Redis before it returns the answer, and the commit's reply is read here once the answer
is out (`close_admission`): the client does not wait for Redis's round trip, and what it
is given is paid for first. Anything else (another method, a batch, invalid arguments)
goes on unchanged, and the tool handler answers it as before.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.geodata.catalogue import TOOL_SPECS
from app.http.errors import send_error
from app.http.server import hold_reading
from app.kit.errors import (
    AppError,
    Forbidden,
    QuotaExceeded,
    RateLimited,
    ServiceUnavailable,
    unavailable_for,
)
from app.kit.principal import CallerPrincipal
from app.mcp.tool_results import compact_json
from app.metering.readings import usage_meta
from app.observability import metrics
from app.tool_calls.service import Admission, admit, close_admission, record_refused

logger = logging.getLogger(__name__)

# A tools/call body is small; a larger one is left to the MCP server and its limits.
MAX_PEEKED_BYTES = 64 * 1024
STATE_KEY = "admission"


@dataclass
class AdmittedCall:
    admission: Admission
    claimed: bool = False


class EdgeAdmission:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get("principal")
        if not isinstance(principal, CallerPrincipal) or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, complete = await _read_body(receive)
        replayed = _replay(body, complete, receive)
        message = _parsed(body) if complete else None
        if _has_a_bad_id(message):
            await _invalid_request(send)
            return
        if principal.is_test and (task_call := _task_call_id(message)) is not None:
            await _refuse_test_task(send, task_call)
            return
        call = _tool_call_of(message)
        if call is None:
            await self.app(scope, replayed, send)
            return
        request_id, name, arguments = call
        started, admission_started = time.perf_counter(), time.monotonic()
        try:
            admission = await admit(principal, name, arguments)
        except Exception as exc:
            answered_here = Forbidden | RateLimited | QuotaExceeded | ServiceUnavailable
            refusal = exc if isinstance(exc, answered_here) else unavailable_for(exc)
            if refusal is None:  # e.g. invalid arguments: the tool handler answers as before
                await self.app(scope, replayed, send)
                return
            if not isinstance(exc, AppError):  # an outage: answered once, not tried again
                logger.warning("tool call %s: a backing service is down: %s", name, exc)
            _hold_after(scope, refusal)
            await _answer(send, request_id, refusal)
            tool = name if name in TOOL_SPECS else "other"
            metrics.tool_call(tool, metrics.outcome_of(refusal), time.perf_counter() - started)
            record_refused(principal, name, refusal, admission_started)
            return
        # The answer goes out while Redis runs the commit: `call_tool` has written it.
        admission.answer_before_commit_reply = True
        scope["state"][STATE_KEY] = AdmittedCall(admission)
        try:
            await self.app(scope, replayed, send)
        finally:
            await close_admission(admission)


def claim(request: Any, name: str) -> Admission | None:
    """The admission the edge made for this request's call of `name`, now the tool
    handler's to commit or release; None when the edge admitted nothing."""
    state = request.scope.get("state", {}) if isinstance(request, Request) else {}
    admitted = state.get(STATE_KEY)
    if not isinstance(admitted, AdmittedCall) or admitted.claimed:
        return None
    if admitted.admission.name != name:
        return None
    admitted.claimed = True
    return admitted.admission


def _hold_after(scope: Scope, refusal: AppError) -> None:
    """The connection's next request is read once the refusal's wait is over
    (`app.http.server`): a flood that ignores Retry-After no longer fills the event loop."""
    if not isinstance(refusal, RateLimited | QuotaExceeded):
        return
    if refusal.remembered_for_s is not None:  # the client came back inside its wait
        hold_reading(scope, refusal.remembered_for_s, early=True)
        return
    wait_s = refusal.details.get("retryAfterSeconds")
    if isinstance(wait_s, int | float):
        hold_reading(scope, float(wait_s), early=False)


async def _answer(send: Send, request_id: str | int, refusal: AppError) -> None:
    result = refusal_result(refusal)
    await send_error(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": result})


def refusal_result(refusal: AppError) -> dict[str, Any]:
    """`error_result(refusal)` as it goes on the wire, built without the SDK's models:
    a flood of refusals would pay pydantic's validation and dump of this fixed shape on
    every one (a fifth of the app's CPU of a refusal). A test keeps the two alike."""
    body = refusal.to_body()
    return {
        "_meta": usage_meta(refusal.reading),
        "content": [{"type": "text", "text": compact_json(body)}],
        "structuredContent": body,
        "isError": True,
        "resultType": "complete",
    }


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """Up to about MAX_PEEKED_BYTES of the body, and whether that is all of it."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True
        if size > MAX_PEEKED_BYTES:
            return b"".join(chunks), False


def _parsed(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None  # the MCP server answers it (a parse error)


def _has_a_bad_id(message: Any) -> bool:
    """A request whose id is neither a string nor an integer (JSON-RPC 2.0, MCP): the MCP
    server would take it for a notification and answer 202 with nothing, and the client
    would wait for an answer that never comes."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return False
    request_id = message["id"]
    return not isinstance(request_id, str | int) or isinstance(request_id, bool)


async def _invalid_request(send: Send) -> None:
    error = {"code": -32600, "message": "Invalid Request: id must be a string or an integer"}
    await send_error(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})


def _task_call_id(message: Any) -> str | int | None:
    """The JSON-RPC id of a task-augmented `tools/call` (a job: `app.mcp.tasks`), else None."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params, request_id = message.get("params"), message.get("id")
    if not isinstance(params, dict) or params.get("task") is None:
        return None
    return request_id if isinstance(request_id, str | int) else None


# JSON-RPC's implementation-defined server error range, as the key refusals (`app.mcp.auth`).
TEST_KEY_RPC_CODE = -32001


async def _refuse_test_task(send: Send, request_id: str | int) -> None:
    """A test-mode key may not run a tool as a task: a task is a job, charged to the
    account's live credits (`app.metering.chunks`). Refused before anything is stored."""
    refusal = Forbidden(
        "Test-mode keys (svc_test_ak_) cannot run tools as tasks: a task is charged to the "
        "account's live credits. Call the tool without `task` (or as a batch), or use a "
        "live key (svc_live_ak_). Nothing was charged.",
        reason="test_key",
    )
    error = {"code": TEST_KEY_RPC_CODE, "message": refusal.message, "data": refusal.to_body()}
    await send_error(send, 200, {"jsonrpc": "2.0", "id": request_id, "error": error})


def _tool_call_of(message: Any) -> tuple[str | int, str, dict[str, Any]] | None:
    """(JSON-RPC id, tool name, arguments) of a single `tools/call` request, else None."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    request_id, params = message.get("id"), message.get("params")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    if params.get("task") is not None:  # runs as a task (`app.mcp.tasks`), metered per row
        return None
    arguments = params.get("arguments") or {}
    return (request_id, params["name"], arguments) if isinstance(arguments, dict) else None


def _replay(body: bytes, complete: bool, receive: Receive) -> Receive:
    """What was read, then the rest of the request from `receive`."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": not complete}
        return await receive()

    return replayed
