"""The api's side: `/metrics`, and wiring observability into the FastAPI app."""

from __future__ import annotations

import json

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.kit.config import Settings, get_settings
from app.observability import exposition, tracing
from app.observability.exposition import OutboxReader
from app.observability.logs import RequestIdMiddleware, configure_logging

UNAUTHENTICATED = {"error": {"code": "UNAUTHENTICATED", "message": "Metrics token required"}}


def metrics_router(outbox_reader: OutboxReader, index_version: int) -> APIRouter:
    router = APIRouter()
    registry = exposition.scrape_registry(outbox_reader=outbox_reader, index_version=index_version)

    @router.get("/metrics", include_in_schema=False)
    def metrics(request: Request) -> Response:
        if not exposition.authorized(get_settings(), request.headers.get("authorization")):
            return Response(
                json.dumps(UNAUTHENTICATED),
                status_code=401,
                media_type="application/json",
                headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
            )
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return router


def install_api(
    app: FastAPI, settings: Settings, outbox_reader: OutboxReader, index_version: int
) -> None:
    """In `create_app`: refuse unprotected metrics in production, JSON logs, request ids
    (outermost middleware, so every answer has one), /metrics, tracing when enabled.
    `outbox_reader` (app.metering.outbox.outbox_stats) and `index_version` (the geodata
    index the tool workers must hold) are given by the app, so this package imports no
    feature."""
    from app.observability import celery_hooks  # defines metrics: after the process group

    exposition.require_metrics_protection(settings)
    configure_logging(settings.log_format, settings.log_level)
    app.add_middleware(RequestIdMiddleware)
    app.include_router(metrics_router(outbox_reader, index_version))
    celery_hooks.install_publisher()
    tracing.instrument_app(app)
