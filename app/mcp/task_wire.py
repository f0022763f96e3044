"""MCP tasks on the wire, in both protocol generations, from a job (`app.jobs`).

- 2025-11-25 (core tasks, docs/specification/2025-11-25/basic/utilities/tasks): a
  `Task` carries `ttl` and `pollInterval`; `tools/call` with `params.task` answers
  `{"task": Task}`; `tasks/result` answers the call's own result with
  `_meta["io.modelcontextprotocol/related-task"]`.
- 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a `Task` carries
  `ttlMs` and `pollIntervalMs`; `tools/call` may answer `{"resultType": "task", ...Task}`;
  `tasks/get` carries the finished call's `result` (or `error`) itself.

A job's statuses are the task's (`working`, `completed`, `cancelled`, `failed`); its
progress message is the task's `statusMessage` ("1,200 of 10,000 rows").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.jobs.service import progress
from app.kit.clock import as_utc, iso_ms
from app.kit.config import get_settings
from app.models import Job

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
# Rows go at the plan's bulk pace (hundreds to thousands a second): a poll a second is
# often enough to see progress and cheap to answer.
POLL_INTERVAL_MS = 1_000
TERMINAL = frozenset({"completed", "failed", "cancelled"})
# A job's origin says how its call was made, so its result has that call's shape: a list
# (`geocode` with `queries`) answers a batch result, one call its own result.
BATCH_ORIGIN, ONE_CALL_ORIGIN = "mcp", "mcp-call"
TASK_ORIGINS = (BATCH_ORIGIN, ONE_CALL_ORIGIN)


@dataclass(frozen=True)
class TaskState:
    """What a task says of its job at one moment (read in one session, used after it)."""

    task_id: str
    tool: str
    origin: str
    status: str
    status_message: str
    created_at: datetime
    updated_at: datetime
    credits: int

    @classmethod
    def of(cls, job: Job) -> TaskState:
        status = progress(job)
        message = status.message
        if job.status == "completed":
            message += f"; {job.rows_with_data:,} with data, {job.rows_with_errors:,} errors"
        return cls(
            task_id=job.id,
            tool=job.tool,
            origin=job.origin,
            status=job.status,
            status_message=message,
            created_at=as_utc(job.created_at),
            updated_at=as_utc(job.updated_at),
            credits=job.credits,
        )

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def ttl_ms(self) -> int:
        """How long the task is kept: its results are kept this long after it ends."""
        return get_settings().job_results_ttl_s * 1000

    def legacy(self) -> dict[str, Any]:
        """The 2025-11-25 `Task`."""
        return {**self._common(), "ttl": self.ttl_ms, "pollInterval": POLL_INTERVAL_MS}

    def modern(self) -> dict[str, Any]:
        """The extension's `Task` (SEP-2663)."""
        return {**self._common(), "ttlMs": self.ttl_ms, "pollIntervalMs": POLL_INTERVAL_MS}

    def _common(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.status_message,
            "createdAt": iso_ms(self.created_at),
            "lastUpdatedAt": iso_ms(self.updated_at),
        }


def declares_tasks(params: Any) -> bool:
    """True when a 2026-07-28 request's client capabilities list the tasks extension."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    capabilities = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def created_legacy(state: TaskState, items: int) -> dict[str, Any]:
    """The 2025-11-25 `CreateTaskResult`, and a line a host may give its model at once."""
    return {
        "task": state.legacy(),
        "_meta": {MODEL_IMMEDIATE_RESPONSE: started_note(state, items)},
    }


def created_modern(state: TaskState) -> dict[str, Any]:
    return {"resultType": "task", **state.modern()}


def started_note(state: TaskState, items: int) -> str:
    return (
        f"Started task {state.task_id}: {state.tool} over {items:,} "
        f"item{'s' if items != 1 else ''}; its result comes when every item is answered."
    )
