"""The Celery application `geosvc`: queues `tools`, `tools.free`, `tools.heavy` and
`billing`, configured from Settings.

The bottom layer: it imports no feature. Features send tasks through `app.queue`; the
task functions live in the `workers` package (the Celery edge), which a worker process
imports. Importing this module only builds configuration; nothing connects until a task
is sent or a worker starts. The choices, and why:

- Broker: `GEOSVC_BROKER_URL`, by default the Redis of `GEOSVC_REDIS_URL`. Production
  uses RabbitMQ (docker-compose.yml): under Redis restarts the kombu Redis transport's
  reconnect race crashed or froze workers, RabbitMQ did not (bench/RESULTS.md has the
  measurements). A RabbitMQ vhost separates deployments; `broker_heartbeat` notices a
  dead broker connection within ~20 s.
- Result backend: always `GEOSVC_REDIS_URL` (the same Redis as the credit counters;
  under Sentinel, the primary its Sentinels name).
  Redis broker keys and result keys are prefixed with `GEOSVC_REDIS_KEY_PREFIX`, so
  several deployments or test runs can share one Redis without taking each other's tasks.
  A tool result therefore lives at `<prefix>celery-task-meta-<task id>` and is published
  on the channel of the same name (what the api subscribes to). Without a Redis URL
  (one-process tools and unit tests) the in-memory broker and cache backend are used.
- JSON only (`task_serializer`, `result_serializer`, `accept_content`): no pickle from
  the network.
- `task_acks_late` + `task_reject_on_worker_lost`: a task is acknowledged after it ran,
  and a task whose worker process died is redelivered instead of lost. So every task may
  run twice and must be idempotent (the ledger insert is on-conflict-do-nothing; the
  rollover writes a period once; reconciliation recomputes from the ledger).
- `worker_prefetch_multiplier = 1`: with late acks a worker holds at most one unstarted
  message per process, so a slow task does not strand others behind it, and prefetched
  messages do not sit in the visibility window unstarted.
- Time limits: tool calls are answered within `tool_deadline_s` (20 s) or abandoned by
  the api, so tasks default to a soft limit of 30 s and a hard limit of 60 s. The beat
  tasks walk every account and set their own longer limits (soft 240 s, hard 300 s).
- `visibility_timeout = 600 s` (Redis broker only): the Redis transport redelivers an
  unacknowledged message after this long, one value for every queue (kombu has no
  per-queue setting). It must exceed the longest hard time limit (300 s) so a task that
  is still running is never handed to a second worker. A tool message that comes back is
  past its `expires` (the tool deadline) and is dropped unrun. RabbitMQ has no visibility
  timeout: a dead worker's messages return when its connection closes, and its
  `consumer_timeout` (compose: 6 min) bounds a consumer that holds a message too long.
- `task_routes`: `tools.*` to queue `tools`, unless the sender names `tools.free` or
  `tools.heavy` (the tool-call service does, by plan and weight: docs/OPERATIONS.md,
  "Tenant isolation"); `billing.*`, `metering.*` and `mail.*` to `billing`, so each can get its
  own worker pool.
- UTC everywhere, so the monthly rollover crontab fires at 00:00 UTC on the 1st.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from celery import Celery
from celery.backends.redis import RedisBackend, SentinelBackend
from kombu import Exchange, Queue

from app.kit.config import Settings, get_settings
from app.kit.redis_client import CONNECT_TIMEOUT_S
from app.queue import broker

# Tool calls by who pays and how heavy (app.tool_calls.routing chooses): paying
# customers' calls, free accounts' calls, and heavy calls of any plan. A paying pool of
# its own (`tools`) keeps a free backlog, a run of big maps or a billing task from
# delaying paying calls.
TOOLS_QUEUE = "tools"
FREE_TOOLS_QUEUE = "tools.free"
HEAVY_TOOLS_QUEUE = "tools.heavy"
TOOL_QUEUES = (TOOLS_QUEUE, FREE_TOOLS_QUEUE, HEAVY_TOOLS_QUEUE)
# Served by a worker pool of lower CPU priority (`geosvc worker --nice`).
BULK_TOOL_QUEUES = (FREE_TOOLS_QUEUE, HEAVY_TOOLS_QUEUE)
BILLING_QUEUE = "billing"
# Bulk jobs' chunks (app/jobs): a queue and a worker pool of their own, so a 100,000-row
# job never stands in front of an interactive call.
JOBS_QUEUE = "jobs"
# The tasks of tool calls (`tools.run`, `tools.run_batch`): routed to the tool queues.
TOOL_TASK_PREFIX = "tools."
QUEUES = (*TOOL_QUEUES, JOBS_QUEUE, BILLING_QUEUE)

VISIBILITY_TIMEOUT_S = 600
TASK_SOFT_TIME_LIMIT_S = 30
TASK_TIME_LIMIT_S = 60
MAINTENANCE_SOFT_TIME_LIMIT_S = 240
MAINTENANCE_TIME_LIMIT_S = 300
# Above the hard limit: a killed run's lock expires; a live run never outlasts its lock.
TASK_LOCK_TTL_S = MAINTENANCE_TIME_LIMIT_S + 60
RESULT_STORE_RETRIES = 20


_awaited_elsewhere: ContextVar[bool] = ContextVar("awaited_elsewhere", default=False)


@contextmanager
def results_awaited_elsewhere() -> Iterator[None]:
    """Tasks sent inside this block have their results awaited by the caller's own
    subscription (`app.queue.replies`), so Celery's result consumer stays out."""
    token = _awaited_elsewhere.set(True)
    try:
        yield
    finally:
        _awaited_elsewhere.reset(token)


class ResultBackend(RedisBackend):
    """Celery's Redis result backend, minus one thing: on every send it subscribes its own
    pub/sub connection to the task's result channel, for an `AsyncResult.get()` that the
    api never makes. Those subscriptions cost two writes per call and buffer every
    result (PNGs included) unread on that connection."""

    def on_task_call(self, producer: Any, task_id: str) -> None:
        if not _awaited_elsewhere.get():
            super().on_task_call(producer, task_id)

    def _store_result(
        self,
        task_id: str,
        result: Any,
        state: str,
        traceback: Any = None,
        request: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Celery reads the stored result before every store, so that a duplicate run
        cannot overwrite a success. A tool call's result is read once by the api waiting
        for it, which deletes it with the call's commit (`app.queue.replies`): nothing to keep,
        and the read is a Redis round trip on every call's path."""
        if not str(getattr(request, "task", "") or "").startswith(TOOL_TASK_PREFIX):
            return super()._store_result(task_id, result, state, traceback, request, **kwargs)
        meta = self._get_result_meta(
            result=result, state=state, traceback=traceback, request=request
        )
        meta["task_id"] = task_id
        self._set_with_state(self.get_key_for_task(task_id), self.encode(meta), state)
        return result


class ClusterResultBackend(ResultBackend):
    """The result backend on a Redis Cluster (`GEOSVC_REDIS_CLUSTER`): redis-py's cluster
    client (it follows MOVED and ASK), seeded from the node the URL names."""

    def _create_client(self, **params: Any) -> Any:
        from redis.cluster import RedisCluster

        return RedisCluster(
            host=params["host"],
            port=params["port"],
            username=params.get("username"),
            password=params.get("password"),
            socket_timeout=params.get("socket_timeout"),
            socket_connect_timeout=params.get("socket_connect_timeout"),
        )

    def _set(self, key: str, value: Any, expires: int | None = None) -> None:
        """The result stored, then published: on a cluster the two cannot share a pipeline
        (the key lives on its slot's node; a PUBLISH reaches every node's subscribers)."""
        expires = self.expires if expires is None else expires
        if expires:
            self.client.setex(key, expires, value)
        else:
            self.client.set(key, value)
        self.client.publish(key, value)


class SentinelResultBackend(ResultBackend, SentinelBackend):
    """The result backend under Sentinel (`GEOSVC_REDIS_SENTINELS`): Celery's Sentinel
    backend (it asks the Sentinels for the primary), with ResultBackend's changes."""


def sentinel_backend_url(settings: Settings) -> str:
    """`sentinel://[user:password@]host:port/db;...`: every Sentinel, with the database
    and credentials of GEOSVC_REDIS_URL (for the primary they name)."""
    url = urlsplit(settings.redis_url or "")
    auth = url.netloc.rpartition("@")[0]
    database = url.path.strip("/") or "0"
    return ";".join(
        f"sentinel://{auth + '@' if auth else ''}{host}:{port}/{database}"
        for host, port in settings.sentinel_addresses()
    )


REDIS_BROKERS = ("redis://", "rediss://", "unix://")
# Brokers on which a queue is a list that the first message creates.
LIST_BROKERS = (*REDIS_BROKERS, "memory://")


def publish_declares(broker_url: str) -> tuple[()] | None:
    """What `send_task(declare=...)` should declare with each message: nothing where a
    queue is a list (kombu would otherwise copy and re-bind the queue entity on every send,
    about 0.06 ms of the api's CPU per call, to find it declared already); Celery's
    default (the queue) on any other broker, which drops a message to an undeclared queue."""
    return () if broker_url.startswith(LIST_BROKERS) else None


def celery_config(settings: Settings) -> dict[str, Any]:
    """The configuration for these Settings (pure; used at import and on reconfigure)."""
    prefix = settings.redis_key_prefix
    broker_url = settings.broker_url or settings.redis_url or "memory://"
    broker_options: dict[str, Any] = {}
    # Plain redis:// gets kombu's Redis transport with one client per channel (broker.py).
    broker_transport = broker.TRANSPORT if broker_url.startswith("redis://") else None
    if broker_url.startswith(REDIS_BROKERS):
        broker_options["visibility_timeout"] = VISIBILITY_TIMEOUT_S
        if prefix:
            broker_options["global_keyprefix"] = prefix
    elif broker_url.startswith("memory://"):
        broker_options["polling_interval"] = 0.01
    if settings.redis_sentinels:
        result_backend = f"{__name__}:SentinelResultBackend+{sentinel_backend_url(settings)}"
        backend_options = {
            "master_name": settings.redis_sentinel_master,
            "sentinel_kwargs": {"socket_connect_timeout": 2.0, "socket_timeout": 2.0},
            **({"global_keyprefix": prefix} if prefix else {}),
        }
    elif settings.redis_url:
        backend_class = "ClusterResultBackend" if settings.redis_cluster else "ResultBackend"
        result_backend = f"{__name__}:{backend_class}+{settings.redis_url}"
        backend_options = {"global_keyprefix": prefix} if prefix else {}
    else:
        result_backend, backend_options = "cache+memory://", {}
    return {
        "broker_url": broker_url,
        "broker_transport": broker_transport,
        "result_backend": result_backend,
        "broker_transport_options": broker_options,
        "result_backend_transport_options": backend_options,
        "broker_connection_retry_on_startup": True,
        # AMQP heartbeats: a dead broker connection is noticed within ~2x this.
        "broker_heartbeat": 10,
        # The worker's remote-control queue (`<name>.celery.pidbox`) not exclusive: a worker
        # cut off from RabbitMQ for a while reconnects before the broker has dropped its old
        # connection, and re-declaring an exclusive queue that connection still holds fails
        # with RESOURCE_LOCKED, which Celery treats as unrecoverable: the worker exited
        # (bench/multihost_drill.py, a 20 s partition). The queue still expires unused.
        "control_queue_exclusive": False,
        # A result stored while Redis restarts is retried (10 ms doubling up to 0.5 s,
        # at most ~8 s in all) instead of failing the task: the api is still waiting for
        # it, and the call would otherwise end in DEADLINE_EXCEEDED.
        # Each try bounded like every other Redis command: a node that died without a
        # word (a host gone, no RST) otherwise held the worker process in recv() for
        # Celery's default 120 s, past the task's hard limit, on every call that stored
        # a result there (bench/multihost_drill.py --redis cluster).
        "redis_socket_timeout": settings.redis_command_timeout_s,
        "redis_socket_connect_timeout": CONNECT_TIMEOUT_S,
        "result_backend_always_retry": True,
        "result_backend_max_retries": RESULT_STORE_RETRIES,
        "result_backend_base_sleep_between_retries_ms": 10,
        "result_backend_max_sleep_between_retries_ms": 500,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_soft_time_limit": TASK_SOFT_TIME_LIMIT_S,
        "task_time_limit": TASK_TIME_LIMIT_S,
        "result_expires": 3600,
        # Each queue on its own direct exchange: a queue without one would inherit the
        # default exchange and routing key, and both queues would receive every message.
        "task_queues": tuple(Queue(name, Exchange(name), routing_key=name) for name in QUEUES),
        "task_default_queue": TOOLS_QUEUE,
        "task_routes": {
            f"{TOOL_TASK_PREFIX}*": {"queue": TOOLS_QUEUE, "routing_key": TOOLS_QUEUE},
            "billing.*": {"queue": BILLING_QUEUE, "routing_key": BILLING_QUEUE},
            "jobs.run_chunk": {"queue": JOBS_QUEUE, "routing_key": JOBS_QUEUE},
            "jobs.*": {"queue": BILLING_QUEUE, "routing_key": BILLING_QUEUE},
            "metering.*": {"queue": BILLING_QUEUE, "routing_key": BILLING_QUEUE},
            # E-mail (account notices) shares the background pool: never a tool worker.
            "mail.*": {"queue": BILLING_QUEUE, "routing_key": BILLING_QUEUE},
        },
        "enable_utc": True,
        "timezone": "UTC",
        # Flower shows tasks only from these events (started, succeeded, failed).
        "worker_send_task_events": True,
    }


celery_app = Celery("geosvc")
celery_app.conf.update(celery_config(get_settings()))


def configure(settings: Settings | None = None) -> None:
    """Re-read Settings (tests repoint the process at another Redis or key prefix).

    Drops cached broker connections, producers and the result backend when the broker
    or prefix changed, so the next send uses the new configuration.
    """
    config = celery_config(settings or get_settings())
    conf = celery_app.conf
    changed = (
        conf.broker_url != config["broker_url"]
        or conf.broker_transport != config["broker_transport"]
        or conf.broker_transport_options != config["broker_transport_options"]
        or conf.result_backend_transport_options != config["result_backend_transport_options"]
        or conf.result_backend != config["result_backend"]
    )
    conf.update(config)
    if changed:
        # Celery caches these per app; its own after-fork hook resets the same attributes.
        # The old pool is not closed: kombu shares pools between apps by connection URL.
        celery_app._pool = None
        if "amqp" in celery_app.__dict__:
            celery_app.amqp._producer_pool = None
        celery_app._backend_cache = None
        celery_app._local.__dict__.pop("backend", None)
