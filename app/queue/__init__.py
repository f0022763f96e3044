"""The bottom layer for background work: the Celery app, and how features use it.

Features send tasks by name through `enqueue` (fire and forget) or `waiter().run_task`
(await the result); task-name constants live with the feature that owns the task, and
the task functions in the `workers` package. Nothing here imports a feature.
"""

from __future__ import annotations

import logging

from app.queue.celery import celery_app, configure
from app.queue.replies import close_waiter, waiter

__all__ = ["celery_app", "close_waiter", "configure", "enqueue", "waiter"]

logger = logging.getLogger(__name__)


def enqueue(name: str, *args: object) -> None:
    """Send task `name(*args)`; its queue comes from the task routes, its result is ignored."""
    celery_app.send_task(
        name, args=list(args), ignore_result=True, argsrepr=repr(args)[:200], kwargsrepr="{}"
    )
