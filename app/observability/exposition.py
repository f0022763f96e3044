"""What a scrape reads, and the worker's exporter (no web framework: workers import it).

Multiprocess mode: `geosvc api` and `geosvc worker` always point
`PROMETHEUS_MULTIPROC_DIR` at a directory of their own (`GEOSVC_METRICS_DIR`, wiped at
start, or a fresh temporary one) before any metric exists, so every uvicorn worker and
every Celery pool process writes its own file and a scrape of any one process sums them
all. A process started without it (a bare `uvicorn app.main:create_app`) serves its own
in-process registry.

Series that describe shared state are read when scraped: the depth of the `tools` and
`billing` queues from the broker (Redis or RabbitMQ, a passive declare each), the outbox
length and the age of its oldest event (`metering.outbox.outbox_stats`), each upstream
breaker's state from Redis (the breaker keeps it at `upstream:breaker:<name>`), how
many workers can answer each tool queue (`app.queue.tool_workers`), Redis's memory and
its limit (INFO memory), when the newest backup finished (`backup:last_success`, written
by `geosvc admin backup`), and the meter batches Stripe does not have yet (database).

Protection: with `GEOSVC_METRICS_TOKEN` set, both ask for `Authorization: Bearer <token>`;
in production it is required (`require_metrics_protection`).
"""

from __future__ import annotations

import hmac
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol
from wsgiref.simple_server import WSGIServer, make_server

from prometheus_client import REGISTRY, CollectorRegistry, make_wsgi_app, multiprocess, values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.kit.config import Settings, get_settings
from app.kit.credentials import bearer_credential
from app.kit.redis_client import sync_redis
from app.observability.bounded_wsgi import BoundedHandler, BoundedWSGIServer
from app.queue import tool_workers
from app.queue.celery import QUEUES, TOOL_QUEUES, celery_app

# Where `geosvc admin backup` records when its newest backup finished (under the key
# prefix): a Unix time, read at every scrape.
BACKUP_STATUS_KEY = "backup:last_success"

logger = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
PROVIDERS = ("census", "nominatim", "overpass", "stripe")
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
    previous = settings.metrics_previous_token
    accepted = [token, previous.get_secret_value() if previous else ""]
    # the scheme read as every credential is (app/kit/credentials.py): any case and spacing
    given = (bearer_credential(authorization) or "").encode()
    # both compared every time, in constant time: which one matched is not told apart
    matches = [hmac.compare_digest(given, one.encode()) for one in accepted if one]
    return any(matches)


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


class OutboxReading(Protocol):
    @property
    def depth(self) -> int: ...

    @property
    def oldest_age_s(self) -> float | None: ...  # None when empty


# Reads the metering outbox from a Redis client (`app.metering.outbox.outbox_stats`): passed
# in by the edge that builds the registry, as this module sits below the metering feature.
OutboxReader = Callable[[Any], OutboxReading]


class SharedStateCollector(Collector):
    """Read per scrape: queue depths from the broker (a passive declare per queue, on a
    connection of its own), the outbox (`outbox_reader`) and the breakers from Redis, and
    whether the database answers."""

    def __init__(
        self,
        outbox_reader: OutboxReader,
        redis_factory: Callable[[], Any] = sync_redis,
        index_version: int | None = None,
    ) -> None:
        self._outbox = outbox_reader
        self._redis = redis_factory
        # the index format of this release (app.geodata, above this module: given by the edge)
        self._index_version = index_version

    def collect(self) -> Iterable[Metric]:
        yield from self._queues()
        yield from self._redis_state()
        yield from self._database()

    def _database(self) -> Iterator[Metric]:
        """Queries bounded by GEOSVC_DB_CONNECT_TIMEOUT_S and the statement timeout: whether
        the database answers (`SELECT 1`: the alert on an unreachable database) and the
        meter batches not yet sent to Stripe (the alert on failing meter reports)."""
        from sqlalchemy import func, select, text

        from app.kit.clock import as_utc, utcnow
        from app.kit.db import get_engine
        from app.models import StripeMeterReport

        up = GaugeMetricFamily("geosvc_database_up", "The database answered this scrape")
        oldest_created = func.min(StripeMeterReport.created_at)
        unsent_query = select(func.count(), oldest_created).where(
            StripeMeterReport.sent_at.is_(None)  # type: ignore[union-attr]
        )
        try:
            with get_engine().connect() as connection:
                connection.execute(text("SELECT 1"))
                up.add_metric([], 1)
                unsent, oldest = connection.execute(unsent_query).one()
        except Exception as exc:  # a scrape must answer even when the database does not
            logger.warning("metrics: database unreachable: %s", exc)
            if not up.samples:
                up.add_metric([], 0)
            yield up
            return
        yield up
        batches = GaugeMetricFamily(
            "geosvc_meter_reports_unsent", "Meter batches recorded but not yet sent to Stripe"
        )
        batches.add_metric([], unsent)
        yield batches
        age = GaugeMetricFamily(
            "geosvc_meter_report_oldest_unsent_age_seconds",
            "Age of the oldest meter batch Stripe does not have yet (0 when none)",
        )
        age.add_metric([], (utcnow() - as_utc(oldest)).total_seconds() if oldest else 0.0)
        yield age

    def _queues(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily(
            "geosvc_queue_depth", "Messages waiting in a Celery queue", labels=["queue"]
        )
        up = GaugeMetricFamily("geosvc_broker_up", "The broker answered this scrape")
        try:
            with celery_app.connection_for_read() as connection:
                for queue in QUEUES:
                    depth.add_metric([queue], _depth(connection, queue))
            up.add_metric([], 1)
        except Exception as exc:  # a scrape must answer even when the broker does not
            logger.warning("metrics: broker unreadable: %s", exc)
            up.add_metric([], 0)
        yield up
        yield depth

    def _redis_state(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("geosvc_redis_state_up", "Redis state readable at scrape")
        try:
            outbox = self._outbox(self._redis())
            store = self._redis()
            pipe = store.pipeline(transaction=False)
            prefix = get_settings().redis_key_prefix
            for provider in PROVIDERS:
                pipe.hget(f"{prefix}upstream:breaker:{provider}", "open_until")
            pipe.get(f"{prefix}{BACKUP_STATUS_KEY}")
            *breakers, last_backup = pipe.execute()
            # Apart from the keys' pipeline: a Redis Cluster's pipeline takes no TIME or INFO.
            seconds, micros = store.time()
            memory = store.info("memory")
            workers = tool_workers.live_workers(self._redis())
        except Exception as exc:  # a scrape must answer even when Redis does not
            logger.warning("metrics: Redis state unreadable: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        events = GaugeMetricFamily("geosvc_outbox_events", "Usage events not yet in the ledger")
        events.add_metric([], outbox.depth)
        yield events
        age = GaugeMetricFamily(
            "geosvc_outbox_oldest_event_age_seconds",
            "Age of the oldest usage event waiting for the ledger (0 when none)",
        )
        age.add_metric([], outbox.oldest_age_s or 0.0)
        yield age
        now_ms = (int(seconds) + int(micros) / 1e6) * 1000
        state = GaugeMetricFamily(
            "geosvc_upstream_breaker_state",
            "Upstream circuit breaker: 0 closed, 1 open, 2 half-open (probing)",
            labels=["provider"],
        )
        for provider, open_until in zip(PROVIDERS, breakers, strict=True):
            state.add_metric([provider], _breaker_state(open_until, now_ms))
        yield state
        yield from _redis_memory(memory)
        backup = GaugeMetricFamily(
            "geosvc_backup_last_success_timestamp_seconds",
            "When the newest `geosvc admin backup` finished (Unix time; 0: none recorded)",
        )
        backup.add_metric([], float(last_backup or 0))
        yield backup
        if self._index_version is not None:
            yield self._tool_workers(workers, self._index_version)

    @staticmethod
    def _tool_workers(workers: list[tool_workers.ToolWorker], index_version: int) -> Metric:
        answering = GaugeMetricFamily(
            "geosvc_tool_workers",
            "Workers that can answer a tool queue (announced in Redis, this release's index "
            "version; 0: no worker takes its calls)",
            labels=["queue"],
        )
        for queue, count in tool_workers.answering(workers, TOOL_QUEUES, index_version).items():
            answering.add_metric([queue], count)
        return answering


def _redis_memory(info: dict[str, Any]) -> Iterator[Metric]:
    used = GaugeMetricFamily("geosvc_redis_memory_used_bytes", "Memory Redis uses (INFO memory)")
    used.add_metric([], float(info.get("used_memory", 0)))
    yield used
    limit = GaugeMetricFamily(
        "geosvc_redis_memory_max_bytes",
        "Redis's maxmemory (0: no limit set; then the host's or container's memory is the limit)",
    )
    limit.add_metric([], float(info.get("maxmemory", 0)))
    yield limit


def _depth(connection: Any, queue: str) -> int:
    # A channel per queue: RabbitMQ closes the channel of a passive declare that finds no
    # queue, which only means nothing declared it yet.
    try:
        with connection.channel() as channel:
            return int(channel.queue_declare(queue=queue, passive=True).message_count)
    except connection.channel_errors:
        return 0


def _breaker_state(open_until: object, now_ms: float) -> int:
    if open_until is None or int(str(open_until)) == 0:
        return BREAKER_CLOSED
    return BREAKER_OPEN if now_ms < int(str(open_until)) else BREAKER_HALF_OPEN


def scrape_registry(
    *, outbox_reader: OutboxReader | None, index_version: int | None = None
) -> CollectorRegistry:
    """The registry a scrape reads: every process's files in multiprocess mode, else this
    process's own metrics; with the state read from Redis and the broker when given an
    `outbox_reader` (the api's /metrics), and with `index_version` the tool workers that
    can answer (announced with that version)."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        registry.register(_Forward(REGISTRY))
    if outbox_reader is not None:
        registry.register(SharedStateCollector(outbox_reader, index_version=index_version))
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
    inner = make_wsgi_app(scrape_registry(outbox_reader=None))

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not authorized(settings, environ.get("HTTP_AUTHORIZATION")):
            start_response("401 Unauthorized", [("WWW-Authenticate", 'Bearer realm="metrics"')])
            return [b"metrics token required\n"]
        return inner(environ, start_response)

    server = make_server(
        settings.worker_metrics_host,
        settings.worker_metrics_port,
        app,
        server_class=BoundedWSGIServer,  # a thread per connection, bounded requests
        handler_class=BoundedHandler,
    )
    threading.Thread(target=server.serve_forever, name="metrics-exporter", daemon=True).start()
    logger.info("worker metrics on %s:%d", settings.worker_metrics_host, server.server_port)
    return server
