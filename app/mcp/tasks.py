"""Long tool calls as MCP tasks, on both protocol generations, over the jobs engine
(`app.jobs`: durable job state in the database, rows in chunks on Celery, each row with
data charged once). Wire shapes: `app.mcp.task_wire`; the `tasks/*` requests:
`app.mcp.task_requests`; a task read from its job: `app.mcp.task_results`.

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
pass through it. `notifications/tasks/status` is pushed on a 2025-11-25 `tasks/result`
answered as SSE (`app.mcp.task_status`); other clients poll (`pollInterval`).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from sqlmodel import Session

from app.geodata.batch import MAX_BATCH_ITEMS
from app.geodata.catalogue import BATCH_FORMS, TOOL_SPECS
from app.jobs.service import start_job, submit_job
from app.kit.errors import AppError, InvalidArgument
from app.kit.principal import CallerPrincipal
from app.mcp.auth import principal_of
from app.mcp.task_requests import (
    cancel_task,
    get_task,
    is_modern,
    list_tasks,
    task_result,
    update_task,
)
from app.mcp.task_results import dumped, in_session
from app.mcp.task_wire import (
    BATCH_ORIGIN,
    ONE_CALL_ORIGIN,
    TASKS_EXTENSION,
    TaskState,
    created_legacy,
    created_modern,
    declares_tasks,
)
from app.mcp.tool_results import error_result

logger = logging.getLogger(__name__)

MAX_TASK_ITEMS = 10_000
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
        if is_modern(ctx):
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
            return self._stamped(dumped(error_result(exc)))
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


def _protocol_error(exc: AppError) -> MCPError:
    """A refused task (invalid list, too many jobs at once) as a JSON-RPC error carrying
    our error object: a 2025-11-25 client that asked for a task expects no tool result."""
    code = types.INVALID_PARAMS if isinstance(exc, InvalidArgument) else TASK_REFUSED
    return MCPError(code, exc.message, data=exc.to_body()["error"])
