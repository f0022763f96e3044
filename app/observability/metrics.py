"""The Prometheus series, and the hooks features call where things happen.

Each hook is one call on the hot path: a counter increment or a histogram observation,
which in multiprocess mode (`geosvc api` / `geosvc worker`, see `exposition`) is a write
into this process's own memory-mapped file under an in-process lock; nothing is shared
between processes until a scrape reads the files. Series read from Redis at scrape time
(queue depths, the outbox, breaker states) live in `exposition`.

Label values are bounded: tools outside the known set count as `other`, outcomes are
`ok` or an error code in lower case.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from datetime import datetime
from typing import ParamSpec, TypeVar

from prometheus_client import Counter, Gauge, Histogram

from app.kit.clock import as_utc, utcnow
from app.kit.errors import AppError
from app.observability.logs import log_event

logger = logging.getLogger("geosvc.calls")

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)
LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)

TOOL_CALLS = Counter(
    "geosvc_tool_calls", "Metered tool calls, by tool and outcome", ["tool", "outcome"]
)
TOOL_CALL_SECONDS = Histogram(
    "geosvc_tool_call_seconds",
    "Tool call latency in the api (validation to answer), by tool",
    ["tool"],
    buckets=LATENCY_BUCKETS,
)
CREDITS_COMMITTED = Counter("geosvc_credits_committed", "Credits charged for successful calls")
QUOTA_REFUSALS = Counter("geosvc_quota_refusals", "Calls refused because the free cap is used up")
CALL_REFUSALS = Counter(
    "geosvc_call_refusals",
    "Calls refused at admission, by plan and limit (rate, concurrency, quota, spend_cap)",
    ["plan", "reason"],
)
RESERVATIONS_IN_FLIGHT = Gauge(
    "geosvc_reservations_in_flight",
    "Credits reserved by calls in progress",
    multiprocess_mode="livesum",
)
UPSTREAM_REQUESTS = Counter(
    "geosvc_upstream_requests",
    "HTTP requests to upstream providers (each attempt), by provider and outcome",
    ["provider", "outcome"],
)
UPSTREAM_RETRIES = Counter(
    "geosvc_upstream_retries", "Upstream attempts that were retried, by provider", ["provider"]
)
UPSTREAM_ERRORS = Counter(
    "geosvc_upstream_errors",
    "Upstream calls that failed after their retries (UPSTREAM_UNAVAILABLE), by provider",
    ["provider"],
)
LEDGER_DRAIN_LAG = Histogram(
    "geosvc_ledger_drain_lag_seconds",
    "Time from a successful call to its usage event being stored in the ledger",
    buckets=LAG_BUCKETS,
)
TASKS = Counter("geosvc_celery_tasks", "Celery tasks run, by task and outcome", ["task", "outcome"])
TASK_SECONDS = Histogram(
    "geosvc_celery_task_seconds", "Celery task run time, by task", ["task"], buckets=LATENCY_BUCKETS
)
MAIL_FAILURES = Counter(
    "geosvc_mail_failures",
    "Messages the mail server did not take: deferred (down, slow, 4xx; retried) or "
    "refused (5xx: dropped)",
    ["reason"],
)

TILES_SERVED = Counter(
    "geosvc_tiles_served",
    "Map tiles answered, by where from: memory (this process's LRU), redis, drawn (a "
    "metatile drawn by a tools worker), not_modified (a 304 to If-None-Match)",
    ["source"],
)
TILE_REFUSALS = Counter(
    "geosvc_tile_refusals", "Tile fetches refused over a tile budget, by budget", ["budget"]
)
TILE_DRAW_SECONDS = Histogram(
    "geosvc_tile_draw_seconds",
    "Time to draw one metatile and encode its tiles, in the tools worker",
    buckets=LATENCY_BUCKETS,
)

P = ParamSpec("P")
R = TypeVar("R")


def outcome_of(exc: BaseException | None) -> str:
    if exc is None:
        return "ok"
    if isinstance(exc, AppError):
        return exc.code.lower()
    return "cancelled" if not isinstance(exc, Exception) else "internal"


def tool_call(tool: str, outcome: str, seconds: float) -> None:
    TOOL_CALLS.labels(tool, outcome).inc()
    TOOL_CALL_SECONDS.labels(tool).observe(seconds)
    ms = round(seconds * 1000, 2)
    log_event(logger, "tool_call", f"tool call {tool} {outcome}", tool=tool, outcome=outcome, ms=ms)


def tool_batch(tool: str, outcomes: Sequence[str], seconds: float) -> None:
    """A batch: each item counted by its outcome; one log line (the latency histogram is
    for single calls, which a batch's duration would skew)."""
    for outcome in outcomes:
        TOOL_CALLS.labels(tool, outcome).inc()
    ok = sum(outcome == "ok" for outcome in outcomes)
    ms = round(seconds * 1000, 2)
    log_event(
        logger,
        "tool_batch",
        f"tool batch {tool}: {ok} of {len(outcomes)} ok",
        tool=tool,
        items=len(outcomes),
        ok=ok,
        ms=ms,
    )


def observed_tool_call(
    tools: Collection[str],
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Decorate `call_tool(principal, name, arguments)`: count, time and log each call.

    The call id in the log line is the one the call bound (`logs.bind_call_id`).
    """

    def decorate(func: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(func)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            name = args[1] if len(args) > 1 else kwargs.get("name")
            tool = name if isinstance(name, str) and name in tools else "other"
            started = time.perf_counter()
            failure: BaseException | None = None
            try:
                return await func(*args, **kwargs)
            except BaseException as exc:
                failure = exc
                raise
            finally:
                tool_call(tool, outcome_of(failure), time.perf_counter() - started)

        return wrapper

    return decorate


def call_refused(plan: str, reason: str, calls: int = 1) -> None:
    CALL_REFUSALS.labels(plan, reason).inc(calls)
    if reason == "quota":
        QUOTA_REFUSALS.inc(calls)


def reservation_opened() -> None:
    RESERVATIONS_IN_FLIGHT.inc()


def reservation_closed() -> None:
    """Released: the call failed or was abandoned, nothing charged."""
    RESERVATIONS_IN_FLIGHT.dec()


def reservation_committed(credits: int) -> None:
    RESERVATIONS_IN_FLIGHT.dec()
    CREDITS_COMMITTED.inc(credits)


def upstream_request(provider: str, outcome: str) -> None:
    """One attempt: `ok`, `client_error` (4xx), `retryable_status` (429, 5xx) or
    `transport_error`."""
    UPSTREAM_REQUESTS.labels(provider, outcome).inc()


def upstream_outcome(status: int) -> str:
    if status == 429 or status >= 500:
        return "retryable_status"
    return "client_error" if status >= 400 else "ok"


def upstream_retry(provider: str) -> None:
    UPSTREAM_RETRIES.labels(provider).inc()


def upstream_error(provider: str) -> None:
    UPSTREAM_ERRORS.labels(provider).inc()


def ledger_drained(created: Iterable[datetime], now: datetime | None = None) -> None:
    """Usage events just stored: how long each waited since its call succeeded."""
    stored_at = now or utcnow()
    for created_at in created:
        LEDGER_DRAIN_LAG.observe(max(0.0, (stored_at - as_utc(created_at)).total_seconds()))


def task_finished(task: str, outcome: str, seconds: float) -> None:
    TASKS.labels(task, outcome).inc()
    TASK_SECONDS.labels(task).observe(seconds)


def mail_failed(reason: str) -> None:
    """`deferred` or `refused` (app.mail.transport's MailDeferred, MailRefused)."""
    MAIL_FAILURES.labels(reason).inc()


def tile_served(source: str) -> None:
    TILES_SERVED.labels(source).inc()


def tile_refused(budget: str) -> None:
    TILE_REFUSALS.labels(budget).inc()


def tile_drawn(seconds: float) -> None:
    TILE_DRAW_SECONDS.observe(seconds)
