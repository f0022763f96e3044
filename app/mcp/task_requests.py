"""The `tasks/*` requests of both protocol generations (`app.mcp.tasks` installs them):
2025-11-25's `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`; the extension's
`tasks/get` (with the result), `tasks/update`, `tasks/cancel`."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from sqlmodel import Session
from starlette.requests import Request

from app.jobs.service import cancel_job, list_jobs
from app.mcp.auth import principal_of
from app.mcp.disconnect import ClientGone, run_unless_client_gone
from app.mcp.task_results import (
    call_result,
    detailed_task,
    dumped,
    failure,
    in_session,
    read_task,
    task_state,
)
from app.mcp.task_status import until_ended
from app.mcp.task_wire import RELATED_TASK, TASK_ORIGINS, TASKS_EXTENSION, TaskState, declares_tasks

TASKS_PAGE = 50


def is_modern(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def get_task(ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams) -> Any:
    principal = principal_of(ctx.request)
    if not is_modern(ctx):
        return (await read_task(principal, params.task_id)).legacy()
    _check_extension_request(ctx, params.task_id)
    return await in_session(lambda session: detailed_task(session, principal, params.task_id))


async def task_result(
    ctx: ServerRequestContext[Any], params: types.GetTaskPayloadRequestParams
) -> Any:
    """2025-11-25: the call's own answer, once the task has ended (waits until then)."""
    if is_modern(ctx):  # the extension's tasks/get carries the result
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found", data="tasks/result")
    principal = principal_of(ctx.request)

    async def ended() -> TaskState:  # its status pushed on the way, when streamed
        return await until_ended(ctx, principal, params.task_id)

    try:  # a client that left stops the wait (the task goes on)
        state = await run_unless_client_gone(ctx.request, ended)
    except ClientGone:
        raise MCPError(types.INTERNAL_ERROR, "The client disconnected") from None
    if state.status == "failed":
        raise failure(state)

    def answer(session: Session) -> dict[str, Any]:
        result = dumped(call_result(session, principal, state))
        result["_meta"] = {**result.get("_meta", {}), RELATED_TASK: {"taskId": state.task_id}}
        return result

    return await in_session(answer)


async def list_tasks(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
) -> dict[str, Any]:
    """2025-11-25: the account's tasks, newest first, a page at a time."""
    if is_modern(ctx):  # the extension has no tasks/list (SEP-2663: no scope to list in)
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found", data="tasks/list")
    principal = principal_of(ctx.request)
    start = _page_start(params.cursor)

    def page(session: Session) -> list[TaskState]:
        found = [
            TaskState.of(job)
            for origin in TASK_ORIGINS
            for job in list_jobs(
                session, principal.user_id, origin=origin, limit=start + TASKS_PAGE + 1
            )
        ]
        found.sort(key=lambda state: (state.created_at, state.task_id), reverse=True)
        return found[start : start + TASKS_PAGE + 1]

    states = await in_session(page)
    listed: dict[str, Any] = {"tasks": [state.legacy() for state in states[:TASKS_PAGE]]}
    if len(states) > TASKS_PAGE:
        listed["nextCursor"] = str(start + TASKS_PAGE)
    return listed


async def cancel_task(
    ctx: ServerRequestContext[Any], params: types.CancelTaskRequestParams
) -> dict[str, Any]:
    """Rows answered so far are kept (and charged), nothing after. 2025-11-25 refuses a
    task that has already ended and answers the task; the extension acknowledges."""
    principal = principal_of(ctx.request)
    modern = is_modern(ctx)
    if modern:
        _check_extension_request(ctx, params.task_id)

    def cancel(session: Session) -> TaskState:
        state = task_state(session, principal, params.task_id)
        if state.terminal:
            if modern:
                return state
            raise MCPError(
                types.INVALID_PARAMS, f"Task {params.task_id} has already ended ({state.status})"
            )
        job = cancel_job(session, principal.user_id, params.task_id)
        session.commit()
        return TaskState.of(job)

    state = await in_session(cancel)
    return {} if modern else state.legacy()


async def update_task(
    ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams
) -> dict[str, Any]:
    """The extension's `tasks/update`: these tasks never ask for input, so there is
    nothing to take; a known task is acknowledged."""
    if not is_modern(ctx):
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found", data="tasks/update")
    _check_extension_request(ctx, params.task_id)
    await read_task(principal_of(ctx.request), params.task_id)
    return {}


def _check_extension_request(ctx: ServerRequestContext[Any], task_id: str) -> None:
    """A 2026-07-28 tasks/* request declares the extension (SEP-2575: -32021 otherwise)
    and names its task in `Mcp-Name` (SEP-2663, for routing; -32020 and HTTP 400 when
    it is missing or another)."""
    if not declares_tasks(ctx.params):
        raise MCPError(
            types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
            data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )
    headers = ctx.request.headers if isinstance(ctx.request, Request) else {}
    if decode_header_value(headers.get(MCP_NAME_HEADER)) != task_id:
        raise MCPError(types.HEADER_MISMATCH, "Mcp-Name header does not match params.taskId")


def _page_start(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
    return int(cursor)
