"""What `geosvc worker` decides before Celery starts: the pool, its niceness, and whether
its geodata lets it take tool tasks (the command itself is in app/cli.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from app.kit.config import Settings
    from app.queue.liveness import Announcer


def worker_pool(queues: str, settings: Settings) -> tuple[str, int | None]:
    """The pool (and its size; None: Celery's default, one process per CPU) of a worker
    taking `queues` when the command line names none.

    `tools` with GEOSVC_TOOLS_POOL=auto: prefork while every tool is embedded (lookups
    are CPU work, and one process per core uses every core; the memory-mapped indices
    are loaded before the fork and shared), threads (GEOSVC_TOOLS_CONCURRENCY) once some
    tool goes upstream (a call mostly waits, so many wait at once). Without `tools`:
    prefork (the billing tasks keep their time limits).
    """
    from app.geodata.catalogue import some_tool_goes_upstream

    if not any(queue.startswith("tools") or queue == "jobs" for queue in queues.split(",")):
        return "prefork", None
    pool = settings.tools_pool
    if pool == "auto":
        pool = "threads" if some_tool_goes_upstream(settings) else "prefork"
    return pool, settings.tools_concurrency if pool == "threads" else None


ALL_QUEUES = "tools,tools.free,tools.heavy,jobs,billing"
# sysexits' EX_CONFIG: a worker of the tool queues without usable geodata refuses to start
DATA_NOT_READY_EXIT_STATUS = 78


def default_niceness(queues: str) -> int:
    """10 for a bulk pool (free or heavy calls, billing, but no paying calls): when it
    shares cores with the paying pool, the kernel gives paying calls the CPU first."""
    from app.queue.celery import BULK_TOOL_QUEUES, JOBS_QUEUE, TOOLS_QUEUE

    taken = set(queues.split(","))
    bulk = {*BULK_TOOL_QUEUES, JOBS_QUEUE}
    return 10 if TOOLS_QUEUE not in taken and taken & bulk else 0


def runs_idle(queues: str) -> bool:
    """A pool of bulk jobs' chunks alone runs at SCHED_IDLE: it gets only the CPU no other
    process of its cgroup wants, and any of them that wakes up preempts it at once. A
    niced process still takes a slice before a woken call runs, and many slices add up
    over a call's hops (api, worker, api); SCHED_IDLE gives a job no slice at all while
    anything else waits. Not for a pool with calls someone waits on (free, heavy, billing)."""
    from app.queue.celery import JOBS_QUEUE

    return set(queues.split(",")) == {JOBS_QUEUE}


# Celery kills a pool process that has not said it is up within 4 s; one at SCHED_IDLE on
# a busy host may not get a core that soon (seen at load average 30 on 2 cores).
IDLE_PROC_ALIVE_TIMEOUT_S = 120.0


def lower_cpu_priority(queues: str, nice: int | None, idle: bool | None) -> str:
    """Lower this process's CPU priority before the pool starts (its processes or threads
    inherit it); returns what was done, for the start-up log. Lowering needs no
    privilege; where SCHED_IDLE is refused (a seccomp profile), niceness 19 stands in."""
    if idle if idle is not None else (nice is None and runs_idle(queues)):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return "SCHED_IDLE"
        except (AttributeError, OSError):  # not Linux, or refused
            nice = 19
    niceness = default_niceness(queues) if nice is None else nice
    if niceness:
        os.nice(niceness)
    return f"nice {niceness}"


def require_tool_data(queues: str, data_dir: Path) -> Announcer | None:
    """A worker of a tool queue checks and loads its geodata before it consumes, or exits
    with one line saying what is wrong and how to fix it (app.geodata.readiness)."""
    from app.queue.celery import JOBS_QUEUE, TOOL_QUEUES

    # a job's chunks run tools too
    consumed = [queue for queue in queues.split(",") if queue in (*TOOL_QUEUES, JOBS_QUEUE)]
    if not consumed:
        return None  # billing alone: no tool task, no data needed
    from app.geodata.readiness import DataNotReady, announcer, require_data

    try:
        data = require_data(data_dir)
    except DataNotReady as exc:
        typer.echo(f"geosvc worker: {exc}", err=True)
        raise typer.Exit(DATA_NOT_READY_EXIT_STATUS) from None
    return announcer(consumed, data)


def quiet_root_warning() -> None:
    """Celery warns at every start when the worker runs as root. In development (`geosvc
    dev` in a container or as root on a laptop) that is the person's choice: said once, at
    debug. Production runs the worker as an unprivileged user (Dockerfile)."""
    import logging
    import warnings

    from celery.exceptions import SecurityWarning

    if os.geteuid() == 0:
        logging.getLogger(__name__).debug("the worker runs as root (development)")
    warnings.filterwarnings("ignore", category=SecurityWarning)
