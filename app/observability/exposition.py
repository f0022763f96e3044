"""What a scrape reads, and the worker's exporter (no web framework: workers import it).

Multiprocess mode: `geosvc api` and `geosvc worker` always point
`PROMETHEUS_MULTIPROC_DIR` at a directory of their own (`GEOSVC_METRICS_DIR`, wiped at
start, or a fresh temporary one) before any metric exists, so every uvicorn worker and
every Celery pool process writes its own file and a scrape of any one process sums them
all. A process started without it (a bare `uvicorn app.main:create_app`) serves its own
in-process registry.

Series that describe shared state are read from Redis when scraped, in one pipeline: the
depth of the `tools` and `billing` queues, the outbox length and the age of its oldest
event, and each upstream breaker's state (the breaker keeps it in Redis,
`upstream:breaker:<provider>`). A scrape costs one round trip, calls nothing.

Protection: with `GEOSVC_METRICS_TOKEN` set, both ask for `Authorization: Bearer <token>`;
in production it is required (`require_metrics_protection`).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIServer, make_server

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    make_wsgi_app,
    multiprocess,
    values,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import _SilentHandler
from prometheus_client.registry import Collector

from app.config import Settings, get_settings
from app.metering.keys import outbox_key
from app.queue.celery import QUEUES
from app.redis_client import sync_redis

logger = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# kombu's Redis transport keeps a message of priority p>0 in the list "<queue>\x06\x16<p>".
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")
PROVIDERS = ("census", "nominatim", "overpass")
BREAKER_CLOSED, BREAKER_OPEN, BREAKER_HALF_OPEN = 0, 1, 2


class MetricsProtectionMissing(RuntimeError):
    pass


def metrics_token(settings: Settings) -> str | None:
    token = settings.metrics_token.get_secret_value() if settings.metrics_token else ""
    return token or None  # an empty setting is no token


def require_metrics_protection(settings: Settings) -> None:
    """Refuse to serve unprotected metrics in production."""
    if not settings.is_development and metrics_token(settings) is None:
        raise MetricsProtectionMissing(
            "GEOSVC_METRICS_TOKEN must be set in production: /metrics and the worker's "
            "metrics port answer only `Authorization: Bearer <GEOSVC_METRICS_TOKEN>`"
        )


def authorized(settings: Settings, authorization: str | None) -> bool:
    token = metrics_token(settings)
    if token is None:
        return True
    expected = f"Bearer {token}"
    return hmac.compare_digest((authorization or "").encode(), expected.encode())


# --- multiprocess directory ------------------------------------------------------------


def prepare_multiprocess_dir(settings: Settings) -> Path:
    """Point this process (and its children) at an empty metrics directory.

    Call before the first metric is created: prometheus_client picks its value class from
    the environment, so it is re-picked here in case it was imported already."""
    if "app.observability.metrics" in sys.modules:
        raise RuntimeError("metrics were defined before their multiprocess directory")
    if settings.metrics_dir is not None:
        path = settings.metrics_dir
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):  # files of a previous run would add to the counts
            stale.unlink()
    else:
        path = Path(tempfile.mkdtemp(prefix="geosvc-metrics-"))
    os.environ[MULTIPROC_ENV] = str(path)
    values.ValueClass = values.get_value_class()
    return path


def remove_multiprocess_dir(path: Path, settings: Settings) -> None:
    if settings.metrics_dir is None:
        shutil.rmtree(path, ignore_errors=True)


def process_exited(pid: int) -> None:
    """Drop a dead process's live gauges (reservations in flight) from the sums."""
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(pid)


# --- what a scrape reads ---------------------------------------------------------------


class RedisStateCollector(Collector):
    """Queue depths, outbox and breakers, read from Redis in one pipeline per scrape."""

    def __init__(self, redis_factory: Callable[[], Any] = sync_redis) -> None:
        self._redis = redis_factory

    def collect(self) -> Iterable[Metric]:
        prefix = get_settings().redis_key_prefix
        try:
            pipe = self._redis().pipeline(transaction=False)
            for queue in QUEUES:
                for suffix in _PRIORITY_SUFFIXES:
                    pipe.llen(f"{prefix}{queue}{suffix}")
            pipe.llen(outbox_key())
            pipe.lindex(outbox_key(), 0)
            for provider in PROVIDERS:
                pipe.hget(f"{prefix}upstream:breaker:{provider}", "open_until")
            pipe.time()
            replies = pipe.execute()
        except Exception as exc:  # a scrape must answer even when Redis does not
            logger.warning("metrics: Redis state unreadable: %s", exc)
            up = GaugeMetricFamily("geosvc_redis_state_up", "Redis state readable at scrape")
            up.add_metric([], 0)
            yield up
            return
        up = GaugeMetricFamily("geosvc_redis_state_up", "Redis state readable at scrape")
        up.add_metric([], 1)
        yield up
        yield from self._families(replies)

    def _families(self, replies: list[Any]) -> Iterator[Metric]:
        depth = GaugeMetricFamily(
            "geosvc_queue_depth", "Messages waiting in a Celery queue", labels=["queue"]
        )
        per_queue = len(_PRIORITY_SUFFIXES)
        for index, queue in enumerate(QUEUES):
            chunk = replies[index * per_queue : (index + 1) * per_queue]
            depth.add_metric([queue], sum(int(n) for n in chunk))
        yield depth
        rest = replies[len(QUEUES) * per_queue :]
        outbox_length, oldest_raw = int(rest[0]), rest[1]
        breakers, (seconds, micros) = rest[2:-1], rest[-1]
        now_s = int(seconds) + int(micros) / 1e6
        outbox = GaugeMetricFamily("geosvc_outbox_events", "Usage events not yet in the ledger")
        outbox.add_metric([], outbox_length)
        yield outbox
        age = GaugeMetricFamily(
            "geosvc_outbox_oldest_event_age_seconds",
            "Age of the oldest usage event waiting for the ledger (0 when none)",
        )
        age.add_metric([], _event_age(oldest_raw, time.time()))
        yield age
        state = GaugeMetricFamily(
            "geosvc_upstream_breaker_state",
            "Upstream circuit breaker: 0 closed, 1 open, 2 half-open (probing)",
            labels=["provider"],
        )
        for provider, open_until in zip(PROVIDERS, breakers, strict=True):
            state.add_metric([provider], _breaker_state(open_until, now_s * 1000))
        yield state


def _event_age(raw: object, now: float) -> float:
    if raw is None:
        return 0.0
    try:
        created = datetime.fromisoformat(str(json.loads(str(raw))["created_at"]))
    except (ValueError, KeyError, TypeError):
        return 0.0
    return max(0.0, now - created.timestamp())


def _breaker_state(open_until: object, now_ms: float) -> int:
    if open_until is None or int(str(open_until)) == 0:
        return BREAKER_CLOSED
    return BREAKER_OPEN if now_ms < int(str(open_until)) else BREAKER_HALF_OPEN


def scrape_registry(*, with_redis_state: bool) -> CollectorRegistry:
    """The registry a scrape reads: every process's files in multiprocess mode, else this
    process's own metrics."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        registry.register(_Forward(REGISTRY))
    if with_redis_state:
        registry.register(RedisStateCollector())
    return registry


class _Forward(Collector):
    def __init__(self, source: CollectorRegistry) -> None:
        self._source = source

    def collect(self) -> Iterable[Metric]:
        return self._source.collect()


# --- the worker's exporter (the api's /metrics is in app.observability.endpoints) ----


def start_worker_exporter(settings: Settings) -> WSGIServer | None:
    """The worker main process's exporter on GEOSVC_WORKER_METRICS_PORT (0: none): the
    pool processes' metrics; queue and outbox state come from the api's /metrics."""
    if not settings.worker_metrics_port:
        return None
    require_metrics_protection(settings)
    inner = make_wsgi_app(scrape_registry(with_redis_state=False))

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not authorized(settings, environ.get("HTTP_AUTHORIZATION")):
            start_response("401 Unauthorized", [("WWW-Authenticate", 'Bearer realm="metrics"')])
            return [b"metrics token required\n"]
        return inner(environ, start_response)

    server = make_server(
        settings.worker_metrics_host,
        settings.worker_metrics_port,
        app,
        handler_class=_SilentHandler,
    )
    threading.Thread(target=server.serve_forever, name="metrics-exporter", daemon=True).start()
    logger.info("worker metrics on %s:%d", settings.worker_metrics_host, server.server_port)
    return server
