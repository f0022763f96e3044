"""Worker liveness: a heartbeat from the consumer loop, and a watchdog that acts on it.

A worker can be alive and useless: after a broker reconnect gone wrong its main process
may sit blocked (e.g. on a pool child's pipe) while the container looks healthy. So the
heartbeat comes from inside the consumer's event loop (a timer entry of the loop itself):
it beats only while the worker actually consumes. Two readers:

- the watchdog thread in the worker's main process: when the loop has beaten once and
  then not for `GEOSVC_WORKER_STALL_S`, it kills the pool and exits with status 70, and
  the platform's restart policy (`restart: unless-stopped`) starts a fresh worker;
- `geosvc worker-health` (compose's healthcheck) reads the heartbeat file's age;
- a worker of the tool queues also announces itself in Redis while its loop beats (an
  `Announcer` thread, `app.queue.tool_workers`): what the api's /readyz and /metrics read.

While the broker is down the loop does not run either, so a worker restarts every
`worker_stall_s` until the broker is back; a fresh worker then waits for the broker.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import Celery, bootsteps

from app.kit.config import get_settings

logger = logging.getLogger(__name__)

HEARTBEAT_S = 2.0
STALLED_EXIT_STATUS = 70

_last_beat: float | None = None
_consuming = threading.Event()  # between the heartbeat step's start and stop


def _beat(path: Path) -> None:
    global _last_beat
    _last_beat = time.monotonic()
    try:
        path.touch()
    except OSError:  # the watchdog still works from memory
        logger.warning("cannot touch the heartbeat file %s", path)


class ConsumerHeartbeat(bootsteps.StartStopStep):
    """Beats from the consumer's own timer, so a blocked consumer stops beating."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        self.timer_entry: Any = None
        super().__init__(parent, **kwargs)

    def start(self, parent: Any) -> None:
        path = get_settings().worker_heartbeat_file
        _beat(path)
        self.timer_entry = parent.timer.call_repeatedly(HEARTBEAT_S, _beat, (path,), priority=10)
        _consuming.set()

    def stop(self, parent: Any) -> None:
        _consuming.clear()
        if _announcer is not None:
            _announcer.withdraw_quietly()
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None

    shutdown = stop


def children_of(pid: int) -> list[int]:
    """Process ids whose parent is `pid` (Linux /proc; empty elsewhere)."""
    children = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(entry.name))
    return children


def _watch(stall_s: float) -> None:
    while True:
        time.sleep(1.0)
        last = _last_beat
        if last is None or time.monotonic() - last <= stall_s:
            continue
        logger.critical(
            "the consumer loop has not run for %.0f s: exiting so the worker is restarted",
            time.monotonic() - last,
        )
        for pid in children_of(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(STALLED_EXIT_STATUS)


def start_watchdog() -> None:
    stall_s = get_settings().worker_stall_s
    if stall_s > 0:
        threading.Thread(target=_watch, args=(stall_s,), name="liveness", daemon=True).start()


@dataclass
class Announcer:
    """Says in Redis that this worker consumes (`publish`), every HEARTBEAT_S while the
    loop beats, from a thread of its own: a slow or unreachable Redis never blocks the
    consumer loop, and a loop that stops beating stops the announcements."""

    publish: Callable[[], None]
    withdraw: Callable[[], None]
    failing: bool = False

    def _publish_if_consuming(self) -> None:
        last = _last_beat
        if not _consuming.is_set() or last is None or time.monotonic() - last > 2 * HEARTBEAT_S:
            return
        try:
            self.publish()
        except Exception as exc:  # Redis away: said once, then again when it is back
            if not self.failing:
                logger.warning("cannot announce this worker in Redis: %s", exc)
            self.failing = True
        else:
            if self.failing:
                logger.info("announcing this worker in Redis again")
            self.failing = False

    def run(self) -> None:
        while True:
            _consuming.wait()
            self._publish_if_consuming()
            time.sleep(HEARTBEAT_S)

    def withdraw_quietly(self) -> None:
        try:
            self.withdraw()
        except Exception as exc:  # the entry lapses by itself
            logger.info("cannot withdraw this worker from Redis: %s", exc)


_announcer: Announcer | None = None


def install(app: Celery, announcer: Announcer | None = None) -> None:
    """The heartbeat step; with an `announcer`, its thread too."""
    global _announcer
    app.steps["consumer"].add(ConsumerHeartbeat)
    if announcer is not None:
        _announcer = announcer
        threading.Thread(target=announcer.run, name="announcer", daemon=True).start()


def heartbeat_age_s(path: Path) -> float | None:
    """Seconds since the consumer loop last beat, or None when it never has."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return None
