"""Wiring observability into a process: the api app, `geosvc api`, `geosvc worker`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import FastAPI

from app.config import Settings
from app.observability import exposition, tracing
from app.observability.logs import RequestIdMiddleware, configure_logging


def install_api(app: FastAPI, settings: Settings) -> None:
    """In `create_app`: refuse unprotected metrics in production, JSON logs, request ids
    (outermost middleware, so every answer has one), /metrics, tracing when enabled."""
    from app.observability import celery_hooks  # defines metrics: after the process group

    exposition.require_metrics_protection(settings)
    configure_logging(settings.log_format, settings.log_level)
    app.add_middleware(RequestIdMiddleware)
    app.include_router(exposition.metrics_router())
    celery_hooks.install_publisher()
    tracing.instrument_app(app)


@contextmanager
def metrics_process_group(settings: Settings) -> Iterator[None]:
    """Around `geosvc api` / `geosvc worker`: their processes share one metrics directory
    (multiprocess mode, whatever the number of processes); removed on exit if temporary."""
    exposition.require_metrics_protection(settings)
    configure_logging(settings.log_format, settings.log_level)
    path = exposition.prepare_multiprocess_dir(settings)
    try:
        yield
    finally:
        exposition.remove_multiprocess_dir(path, settings)
