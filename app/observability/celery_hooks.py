"""Observability of Celery processes, through Celery's signals (no task code changes).

- Publishing (the api): the request id goes into the message headers (`geosvc_request_id`).
- Running (a worker): around each task the call id (a tool call's task id is its call
  id) and the request id are bound, so every log line of the task carries them; the task
  is counted and timed; one `task_done` line is logged.
- Logging: Celery's own logging setup is replaced by ours (JSON lines on stderr).
- Metrics: the worker's main process serves every pool process's metrics
  (`exposition.start_worker_exporter`); a pool process that exits is marked dead.
- Tracing: initialised in each pool process after the fork, or in the main process for
  the thread and solo pools.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from celery import signals

from app.kit.config import get_settings
from app.observability import exposition, metrics, tracing
from app.observability.logs import (
    bind_call_id,
    bind_request_id,
    call_id_var,
    configure_logging,
    current_request_id,
    log_event,
    request_id_var,
)

logger = logging.getLogger("geosvc.tasks")

REQUEST_ID_HEADER = "geosvc_request_id"

_started: dict[str, float] = {}


def add_request_id(headers: dict[str, Any] | None = None, **_kwargs: Any) -> None:
    """before_task_publish: carry the caller's request id to the worker."""
    request_id = current_request_id()
    if request_id and headers is not None:
        headers[REQUEST_ID_HEADER] = request_id


def install_publisher() -> None:
    """In a process that sends tasks (the api)."""
    signals.before_task_publish.connect(add_request_id, weak=False)


def _task_started(task_id: str | None = None, task: Any = None, **_kwargs: Any) -> None:
    if task_id is None:
        return
    request = getattr(task, "request", None)
    bind_request_id(request.get(REQUEST_ID_HEADER) if request is not None else None)
    bind_call_id(task_id)
    _started[task_id] = time.perf_counter()


def _task_finished(
    task_id: str | None = None, task: Any = None, state: str | None = None, **_kwargs: Any
) -> None:
    started = _started.pop(task_id or "", None)
    if started is not None:
        name = getattr(task, "name", "unknown")
        outcome = (state or "unknown").lower()
        seconds = time.perf_counter() - started
        metrics.task_finished(name, outcome, seconds)
        ms = round(seconds * 1000, 2)
        log_event(logger, "task_done", f"task {name} {outcome}", task=name, outcome=outcome, ms=ms)
    call_id_var.set(None)
    request_id_var.set(None)


def _setup_logging(**_kwargs: Any) -> None:
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)
    # Celery's "Task ... received" line carries the task's arguments (in its `data`) and
    # "Task ... succeeded in 0.01s: <return value>" its result: users' queries and answers.
    # Our `task_done` line says id, task, outcome and timing. Failures still log (ERROR).
    for name in ("celery.worker.strategy", "celery.app.trace"):
        logging.getLogger(name).setLevel(logging.WARNING)


def install_worker(pool: str) -> None:
    """In `geosvc worker`, before the worker starts."""
    settings = get_settings()
    install_publisher()  # tasks sent from tasks (the outbox drain) keep the request id
    signals.setup_logging.connect(_setup_logging, weak=False)
    signals.task_prerun.connect(_task_started, weak=False)
    signals.task_postrun.connect(_task_finished, weak=False)

    def start_exporter(**_kwargs: Any) -> None:
        exposition.start_worker_exporter(settings)

    def process_shutdown(**_kwargs: Any) -> None:
        tracing.shutdown_tracing()
        exposition.process_exited(os.getpid())

    signals.worker_init.connect(start_exporter, weak=False)
    signals.worker_process_shutdown.connect(process_shutdown, weak=False)
    if tracing.enabled():
        if pool == "prefork":
            signals.worker_process_init.connect(
                lambda **_: tracing.setup_tracing("geosvc-worker"), weak=False
            )
        else:
            signals.worker_init.connect(
                lambda **_: tracing.setup_tracing("geosvc-worker"), weak=False
            )
