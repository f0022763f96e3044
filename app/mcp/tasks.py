"""Long tool calls as MCP tasks, on both protocol generations, over the jobs engine
(`app.jobs`: durable job state in the database, rows in chunks on Celery, each row with
data charged once). Wire shapes: `app.mcp.task_wire`.

- **2025-11-25**: `capabilities.tasks` (tools/call, list, cancel) and
  `execution.taskSupport: "optional"` on the tools that take lists. A `tools/call` with
  `params.task` is stored as a job and answered `CreateTaskResult` at once; `tasks/get`,
  `tasks/result` (waits for the end, then the call's own result), `tasks/list`,
  `tasks/cancel`.
- **2026-07-28**: the `io.modelcontextprotocol/tasks` extension, in `server/discover`.
  The server decides: a list longer than a call takes (`MAX_BATCH_ITEMS`) is answered
  with a task when the request declares the extension; without it the call's limit
  stands (INVALID_ARGUMENT, as before; the server can answer, so SEP-2663's -32021 is not
  owed). `tasks/get` carries the result; `tasks/update` and `tasks/cancel` are
  acknowledged.

As a task a list takes up to `MAX_TASK_ITEMS` items. A task is its account's: another
account's task id is not found. The job is committed before the answer goes out, so a
`tasks/get` on any api replica finds it.

The task-augmented `tools/call` is answered by a `Server.middleware`, ahead of the SDK's
params validation and result sieve: the SDK's 2025-11-25 sieve knows `tools/call` only as
a `CallToolResult` (it leaves tasks to the application), so a `CreateTaskResult` must not
pass through it. `notifications/tasks/status` is not sent: the transport answers each
request with one JSON response (stateless), so no stream stays open to carry it; clients
poll (`pollInterval`), as the specification asks them to anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from sqlmodel import Session
from starlette.requests import Request

from app.geodata.batch import MAX_BATCH_ITEMS
from app.geodata.catalogue import BATCH_FORMS, TOOL_SPECS
from app.jobs.service import (
    batch_result,
    cancel_job,
    get_job,
    job_rows,
    list_jobs,
    start_job,
    submit_job,
)
from app.kit.db import new_session
from app.kit.errors import AppError, Internal, InvalidArgument
from app.kit.principal import CallerPrincipal
from app.mcp.auth import principal_of
from app.mcp.disconnect import ClientGone, run_unless_client_gone
from app.mcp.task_wire import (
    BATCH_ORIGIN,
    ONE_CALL_ORIGIN,
    RELATED_TASK,
    TASK_ORIGINS,
    TASKS_EXTENSION,
    TaskState,
    created_legacy,
    created_modern,
    declares_tasks,
)
from app.mcp.tool_results import compact_json, error_result, success_result
from app.metering.readings import MeterReading, usage_meta
from app.metering.refusals import credit_limit
from app.metering.service import usage_for
from app.plans import Plan

logger = logging.getLogger(__name__)

MAX_TASK_ITEMS = 10_000
TASKS_PAGE = 50
# tasks/result waits for the end by reading the job this often.
RESULT_POLL_S = 0.5
# JSON-RPC's range for a server's own errors: a task refused for a reason other than its
# arguments (too many jobs at once); `data` is our error object.
TASK_REFUSED = -32000
# 2025-11-25: a server that does tasks says so at initialize.
LEGACY_CAPABILITY = types.ServerTasksCapability(
    list=types.TasksListCapability(),
    cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(
        tools=types.TasksToolsCapability(call=types.TasksCallCapability())
    ),
)
TASK_SUPPORT = types.ToolExecution(task_support="optional")

T = TypeVar("T")


def execution_for(name: str) -> types.ToolExecution | None:
    """The tools that take lists may run as tasks."""
    return TASK_SUPPORT if name in BATCH_FORMS else None


def task_input_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema with its lists as a task takes them: up to MAX_TASK_ITEMS
    (a call answered at once refuses more than MAX_BATCH_ITEMS, the server's instructions
    say so). An object item's `additionalProperties: false` is left out to keep the tool
    within its budget: each item is checked as a call anyway, and answered
    INVALID_ARGUMENT in its place; so is an empty list."""
    form = BATCH_FORMS.get(name)
    if form is None:
        return schema
    properties = dict(schema["properties"])
    for batch in form.lists:
        listed = {k: v for k, v in properties[batch.argument].items() if k != "minItems"}
        listed["maxItems"] = MAX_TASK_ITEMS
        if isinstance(items := listed.get("items"), dict):
            listed["items"] = {k: v for k, v in items.items() if k != "additionalProperties"}
        properties[batch.argument] = listed
    return {**schema, "properties": properties}


class TaskingServer(Server[Any]):
    """The low-level `Server`, advertising tasks: the 2025-11-25 capability at initialize,
    the extension in `server/discover` (and in the handshake's capabilities)."""

    def get_capabilities(
        self,
        notification_options: Any = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            extensions,
            protocol_version=protocol_version,
        )
        if protocol_version in MODERN_PROTOCOL_VERSIONS:
            # Serving subscriptions/listen (task status) makes the SDK claim list
            # changes; the tool list never changes while a server runs.
            return capabilities.model_copy(
                update={"tools": types.ToolsCapability(list_changed=False)}
            )
        return capabilities.model_copy(update={"tasks": LEGACY_CAPABILITY})


def install(server: TaskingServer) -> None:
    """Tasks on `server`: the extension, the task-augmented tools/call, tasks/*."""
    server.extensions[TASKS_EXTENSION] = {}
    server.middleware.append(TaskCalls(server))
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, get_task)
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, task_result)
    server.add_request_handler("tasks/list", types.PaginatedRequestParams, list_tasks)
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, cancel_task)
    server.add_request_handler("tasks/update", types.GetTaskRequestParams, update_task)


def _modern(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


class TaskCalls:
    """Answers a `tools/call` that runs as a task; every other request goes on."""

    def __init__(self, server: Server[Any]) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, dict):
            return await call_next(ctx)
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name not in TOOL_SPECS or not isinstance(arguments, dict):
            return await call_next(ctx)  # the tool handler answers as for any call
        if _modern(ctx):
            return await self._modern_call(ctx, call_next, name, arguments)
        if not isinstance(params.get("task"), dict):
            return await call_next(ctx)
        form = BATCH_FORMS.get(name)
        if form is None:  # the specification's answer for a tool without taskSupport
            raise MCPError(types.METHOD_NOT_FOUND, f"{name} does not run as a task")
        try:
            state, items = await _start(principal_of(ctx.request), name, arguments)
        except AppError as exc:
            raise _protocol_error(exc) from None
        return created_legacy(state, items)

    async def _modern_call(
        self,
        ctx: ServerRequestContext[Any],
        call_next: CallNext,
        name: str,
        arguments: dict[str, Any],
    ) -> HandlerResult:
        """Long lists as tasks when the client takes them (the server decides, SEP-2663)."""
        form = BATCH_FORMS.get(name)
        length = form.list_length(arguments) if form else None
        if length is None or length <= MAX_BATCH_ITEMS:
            return await call_next(ctx)
        if not declares_tasks(ctx.params):  # the 100-item limit of a call answered at once
            return await call_next(ctx)
        try:
            state, _ = await _start(principal_of(ctx.request), name, arguments)
        except AppError as exc:
            return self._stamped(_dumped(error_result(exc)))
        return self._stamped(created_modern(state))

    def _stamped(self, result: dict[str, Any]) -> dict[str, Any]:
        """A 2026-07-28 result as the SDK would have sent it (this answer bypasses it)."""
        meta = dict(result.get("_meta") or {})
        meta.setdefault(types.SERVER_INFO_META_KEY, self.server.server_info_stamp)
        return {**result, "resultType": result.get("resultType", "complete"), "_meta": meta}


async def _start(
    principal: CallerPrincipal, name: str, arguments: dict[str, Any]
) -> tuple[TaskState, int]:
    """Store the call as a job (committed), then send its first chunks."""
    form = BATCH_FORMS[name]
    if form.is_called(arguments):
        items, origin = form.items(arguments, max_items=MAX_TASK_ITEMS), BATCH_ORIGIN
    else:
        items, origin = [arguments], ONE_CALL_ORIGIN

    def submit(session: Session) -> TaskState:
        job = submit_job(
            session,
            user_id=principal.user_id,
            key_id=principal.key_id,
            tool=name,
            items=items,
            origin=origin,
            max_rows=MAX_TASK_ITEMS,
        )
        session.commit()
        return TaskState.of(job)

    state = await in_session(submit)
    await anyio.to_thread.run_sync(start_job, state.task_id)
    logger.info("task %s: %s over %d items", state.task_id, name, len(items))
    return state, len(items)


async def get_task(ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams) -> Any:
    principal = principal_of(ctx.request)
    if not _modern(ctx):
        return (await _task(principal, params.task_id)).legacy()
    _check_extension_request(ctx, params.task_id)
    return await in_session(lambda session: detailed_task(session, principal, params.task_id))


def detailed_task(session: Session, principal: CallerPrincipal, task_id: str) -> dict[str, Any]:
    """The extension's `DetailedTask`: the task, and its `result` or `error` once ended."""
    state = task_state(session, principal, task_id)
    task = state.modern()
    if state.status == "completed":
        task["result"] = _dumped(_call_result(session, principal, state))
    elif state.status == "failed":
        task["error"] = _failure(state).error.model_dump(exclude_none=True)
    return task


async def task_result(
    ctx: ServerRequestContext[Any], params: types.GetTaskPayloadRequestParams
) -> Any:
    """2025-11-25: the call's own answer, once the task has ended (waits until then)."""
    if _modern(ctx):  # the extension's tasks/get carries the result
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found", data="tasks/result")
    principal = principal_of(ctx.request)

    async def ended() -> TaskState:
        while not (state := await _task(principal, params.task_id)).terminal:
            await anyio.sleep(RESULT_POLL_S)
        return state

    try:  # a client that left stops the wait (the task goes on)
        state = await run_unless_client_gone(ctx.request, ended)
    except ClientGone:
        raise MCPError(types.INTERNAL_ERROR, "The client disconnected") from None
    if state.status == "failed":
        raise _failure(state)

    def answer(session: Session) -> dict[str, Any]:
        result = _dumped(_call_result(session, principal, state))
        result["_meta"] = {**result.get("_meta", {}), RELATED_TASK: {"taskId": state.task_id}}
        return result

    return await in_session(answer)


async def list_tasks(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
) -> dict[str, Any]:
    """2025-11-25: the account's tasks, newest first, a page at a time."""
    if _modern(ctx):  # the extension has no tasks/list (SEP-2663: no scope to list in)
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
    modern = _modern(ctx)
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
    if not _modern(ctx):
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found", data="tasks/update")
    _check_extension_request(ctx, params.task_id)
    await _task(principal_of(ctx.request), params.task_id)
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


def _call_result(
    session: Session, principal: CallerPrincipal, state: TaskState
) -> types.CallToolResult:
    """What the call would have answered had it run synchronously: a batch's result for
    a list, the tool's own result (or error) for one call; `_meta["geosvc/usage"]`
    with the task's charge and the month's credits now."""
    reading = _reading(session, principal.user_id, state.credits)
    if state.origin != ONE_CALL_ORIGIN:
        body = batch_result(session, principal.user_id, state.task_id)
        return success_result(state.tool, body, reading)
    rows = job_rows(session, principal.user_id, state.task_id, limit=1)
    if rows and rows[0].error is None:
        return success_result(state.tool, rows[0].result or {}, reading)
    # the error object as the call alone answers it (CANCELLED: a cancel stopped it)
    body = {"error": rows[0].error if rows else Internal().to_body()["error"]}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=compact_json(body))],
        structured_content=body,
        is_error=True,
        meta=usage_meta(reading),
    )


def _reading(session: Session, user_id: str, charged: int) -> MeterReading:
    usage = usage_for(session, user_id)
    plan = Plan(usage.mode)
    return MeterReading(
        charged=charged,
        used=usage.used - usage.granted,
        plan=plan,
        period=usage.period,
        granted=usage.granted,
        credit_limit=credit_limit(plan, usage.creditCap),
    )


def _failure(state: TaskState) -> MCPError:
    return MCPError(types.INTERNAL_ERROR, f"Task {state.task_id} failed: {state.status_message}")


async def _task(principal: CallerPrincipal, task_id: str) -> TaskState:
    return await in_session(lambda session: task_state(session, principal, task_id))


def task_state(session: Session, principal: CallerPrincipal, task_id: str) -> TaskState:
    """The caller's task; another account's, or a job that is not a task, is not found."""
    try:
        job = get_job(session, principal.user_id, task_id)
    except AppError:
        job = None
    if job is None or job.origin not in TASK_ORIGINS:
        raise MCPError(
            types.INVALID_PARAMS, f"No task {task_id!r} (tasks expire with their results)"
        )
    return TaskState.of(job)


async def in_session(work: Callable[[Session], T]) -> T:
    def run() -> T:
        with new_session() as session:
            return work(session)

    return await anyio.to_thread.run_sync(run)


def _page_start(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
    return int(cursor)


def _protocol_error(exc: AppError) -> MCPError:
    """A refused task (invalid list, too many jobs at once) as a JSON-RPC error carrying
    our error object: a 2025-11-25 client that asked for a task expects no tool result."""
    code = types.INVALID_PARAMS if isinstance(exc, InvalidArgument) else TASK_REFUSED
    return MCPError(code, exc.message, data=exc.to_body()["error"])


def _dumped(result: types.CallToolResult | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(result, types.CallToolResult):
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dict(result)
