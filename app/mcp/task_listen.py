"""Task status pushed where a stream is open: a 2026-07-28 `subscriptions/listen` with
`notifications.taskIds` (SEP-2663). The listen response is an SSE stream: the
acknowledgment names the tasks it will report on (the caller's own; others are left
out), then each change of a task (status or progress message) is a
`notifications/tasks` carrying the whole `DetailedTask`, as `tasks/get` would answer it;
the stream ends gracefully once every task named has ended.

The tasks are read from the database (`LISTEN_POLL_S`), not from an in-process bus, so
any api replica serves the stream whichever worker runs the rows. 2025-11-25's
`notifications/tasks/status` rides on that generation's `tasks/result` instead
(`app.mcp.task_status`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from pydantic import ConfigDict
from sqlmodel import Session

from app.kit.principal import CallerPrincipal
from app.mcp.auth import principal_of
from app.mcp.task_results import detailed_task, in_session, task_state
from app.mcp.task_wire import TASKS_EXTENSION, TERMINAL, declares_tasks

LISTEN_POLL_S = 0.5
# A stream ends (gracefully: the client may listen again) after this long at most.
LISTEN_MAX_S = 900.0
MAX_LISTENED_TASKS = 100


class TaskStatusParams(types.NotificationParams):
    """A `DetailedTask` as notification params (its fields as the wire names them)."""

    model_config = ConfigDict(extra="allow")


class TaskStatusNotification(types.Notification[TaskStatusParams, Literal["notifications/tasks"]]):
    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: TaskStatusParams


async def listen(
    ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
) -> types.SubscriptionsListenResult:
    subscription_id = ctx.request_id
    if subscription_id is None:
        raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
    requested = _task_ids(params.notifications)
    if requested and not declares_tasks(ctx.params):
        raise MCPError(
            types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
            data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        )
    principal = principal_of(ctx.request)
    meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
    pending = await in_session(lambda session: _owned(session, principal, requested))
    # Only task status is honoured: the tool list never changes while a server runs.
    honored = types.SubscriptionFilter.model_validate({"taskIds": pending})
    await ctx.session.send_notification(
        types.SubscriptionsAcknowledgedNotification(
            params=types.SubscriptionsAcknowledgedNotificationParams(
                notifications=honored, _meta=meta
            )
        ),
        related_request_id=subscription_id,
    )
    sent: dict[str, tuple[str, str]] = {}
    with anyio.move_on_after(LISTEN_MAX_S):
        while pending:
            tasks = await in_session(partial(_detailed, principal=principal, task_ids=pending))
            for task in tasks:
                seen = (task["status"], task["statusMessage"])
                if sent.get(task["taskId"]) != seen:
                    sent[task["taskId"]] = seen
                    notification = TaskStatusNotification(
                        params=TaskStatusParams.model_validate({**task, "_meta": meta})
                    )
                    await ctx.session.send_notification(
                        notification,  # type: ignore[arg-type]  # an extension's notification
                        related_request_id=subscription_id,
                    )
            pending = [task["taskId"] for task in tasks if task["status"] not in TERMINAL]
            if pending:
                await anyio.sleep(LISTEN_POLL_S)
    return types.SubscriptionsListenResult(_meta=meta)


def _detailed(
    session: Session, *, principal: CallerPrincipal, task_ids: list[str]
) -> list[dict[str, Any]]:
    return [detailed_task(session, principal, task_id) for task_id in task_ids]


def _task_ids(notifications: types.SubscriptionFilter) -> list[str]:
    requested = (notifications.model_extra or {}).get("taskIds") or []
    if not isinstance(requested, list) or not all(isinstance(i, str) for i in requested):
        raise MCPError(types.INVALID_PARAMS, "notifications.taskIds must be a list of task ids")
    if len(requested) > MAX_LISTENED_TASKS:
        raise MCPError(
            types.INVALID_PARAMS, f"At most {MAX_LISTENED_TASKS} task ids in one subscription"
        )
    return list(dict.fromkeys(requested))


def _owned(session: Session, principal: CallerPrincipal, task_ids: list[str]) -> list[str]:
    """The caller's tasks among `task_ids` (another account's is left out, not named)."""
    owned: list[str] = []
    for task_id in task_ids:
        try:
            task_state(session, principal, task_id)
        except MCPError:
            continue
        owned.append(task_id)
    return owned
