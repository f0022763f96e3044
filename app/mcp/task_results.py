"""MCP tasks read from their jobs (`app.jobs`): the caller's task, its `DetailedTask`, and
the result its call would have answered synchronously. Shared by the task requests
(`app.mcp.task_requests`), the task-augmented tools/call (`app.mcp.tasks`) and the
streams that report status (`app.mcp.task_listen`, `app.mcp.task_status`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from sqlmodel import Session

from app.jobs.service import batch_result, get_job, job_rows
from app.kit.db import new_session
from app.kit.errors import AppError, Internal
from app.kit.principal import CallerPrincipal
from app.mcp.task_wire import ONE_CALL_ORIGIN, TASK_ORIGINS, TaskState
from app.mcp.tool_results import compact_json, success_result
from app.metering.readings import MeterReading, usage_meta
from app.metering.refusals import credit_limit
from app.metering.usage import usage_for
from app.plans import Plan

T = TypeVar("T")


def detailed_task(session: Session, principal: CallerPrincipal, task_id: str) -> dict[str, Any]:
    """The extension's `DetailedTask`: the task, and its `result` or `error` once ended."""
    state = task_state(session, principal, task_id)
    task = state.modern()
    if state.status == "completed":
        task["result"] = dumped(call_result(session, principal, state))
    elif state.status == "failed":
        task["error"] = failure(state).error.model_dump(exclude_none=True)
    return task


def call_result(
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


def failure(state: TaskState) -> MCPError:
    return MCPError(types.INTERNAL_ERROR, f"Task {state.task_id} failed: {state.status_message}")


async def read_task(principal: CallerPrincipal, task_id: str) -> TaskState:
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


def dumped(result: types.CallToolResult | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(result, types.CallToolResult):
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dict(result)
