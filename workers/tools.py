"""Tool tasks (queue `tools`): one task runs any tool; another a batch of
calls of one tool (`tools.run_batch`, the batch endpoints: one task for up to 100 items).

No Celery retries: the api awaits the answer under `tool_deadline_s`, and the upstream
client retries short failures itself (tenacity) within that deadline. The task is sent
with `expires` at the deadline, so a message redelivered after a worker died is dropped,
not run for nobody.
"""

from __future__ import annotations

import gc
from typing import Any

from celery.signals import worker_init

from app.geodata import service as geodata
from app.geodata.loading import loaded_provider
from app.kit.config import get_settings
from app.queue import celery_app
from app.tool_calls import service
from app.tool_calls.batch import RUN_BATCH_TASK, run_tool_batch
from app.tool_calls.service import RUN_TOOL_TASK


@worker_init.connect
def load_geodata(**_kwargs: Any) -> None:
    """The rest of what calls read (area and profile tables, upstream clients) before the
    pool starts: its threads (or forked children) share one copy, read-only, and no call
    waits for a load. `geosvc worker` has checked and loaded the indices already when it
    consumes a tool queue (app.geodata.readiness); a billing worker loads nothing."""
    if loaded_provider() is not None:
        geodata.warm_up()
    gc.freeze()  # the indices and tables are for life: no full collection walks them


# Read once, at import: a worker process's settings do not change while it runs.
TOOL_TASK_EVENTS = get_settings().tool_task_events


@celery_app.task(name=RUN_TOOL_TASK, send_events=TOOL_TASK_EVENTS)
def run_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return service.run_tool(name, arguments)


@celery_app.task(name=RUN_BATCH_TASK, send_events=TOOL_TASK_EVENTS)
def run_batch(name: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return run_tool_batch(name, items)
