"""OpenTelemetry tracing: off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set.

With it set, spans of FastAPI requests, Celery publishes and runs, Redis commands,
SQLAlchemy statements and httpx requests go to that OTLP/HTTP endpoint in batches
(`OTEL_SERVICE_NAME` and the other standard OTEL_* variables apply). The packages are
the optional `otel` dependency group (`pip install 'geosvc[otel]'`) and are imported only
here, only when enabled, so the default path pays nothing.

A worker initialises in each pool process after the fork (`worker_process_init`): the
batch exporter's thread does not survive a fork.
"""

from __future__ import annotations

import logging
import os
from typing import Any

logger = logging.getLogger(__name__)

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"

_provider: Any = None


def enabled() -> bool:
    return bool(os.environ.get(ENDPOINT_ENV))


def setup_tracing(service_name: str) -> bool:
    """Install the tracer provider and the library instrumentations (once per process)."""
    global _provider
    if not enabled() or _provider is not None:
        return _provider is not None
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.celery import CeleryInstrumentor
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
        from opentelemetry.instrumentation.redis import RedisInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise RuntimeError(
            f"{ENDPOINT_ENV} is set but the OpenTelemetry packages are missing "
            f"({exc.name}): install them with pip install 'geosvc[otel]'"
        ) from exc
    name = os.environ.get("OTEL_SERVICE_NAME", service_name)
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    CeleryInstrumentor().instrument()
    HTTPXClientInstrumentor().instrument()
    RedisInstrumentor().instrument()
    _trace_sql_engine()
    _provider = provider
    logger.info("tracing to %s as %s", os.environ[ENDPOINT_ENV], name)
    return True


def _trace_sql_engine() -> None:
    """SQLAlchemy spans for our engine. Not through SQLAlchemyInstrumentor: it declines
    SQLAlchemy 2.1 (its declared range ends below it) and patches the asyncio extension,
    which needs greenlet; its EngineTracer, which traces one engine, works as is."""
    from opentelemetry import metrics, trace
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer

    from app.kit.db import get_engine

    scope = "opentelemetry.instrumentation.sqlalchemy"
    usage = metrics.get_meter(scope).create_up_down_counter("db.client.connections.usage")
    EngineTracer(trace.get_tracer(scope), get_engine(), usage)


def instrument_app(app: Any) -> None:
    """FastAPI's server spans (the app is built per process, so per process)."""
    if setup_tracing("geosvc-api"):
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        FastAPIInstrumentor.instrument_app(app, excluded_urls="healthz,metrics")


def shutdown_tracing() -> None:
    """Flush what is batched (a worker process exiting)."""
    if _provider is not None:
        _provider.shutdown()
