"""Entries written after the answer: refused calls, a flood coalesced, and batches.

A call refused before its reservation (rate, concurrency, credits, invalid arguments) has
no round trip of its own to ride on, and a client that ignores `retryAfterSeconds` sends
hundreds of them a second. Writing each one costs the api a Redis round trip (about
0.2-0.3 ms of CPU on a call whose refusal costs about 1 ms; bench/call_cpu.py) and
would push every other call out of the account's log within seconds. So the first
refusal of a kind (account, principal, tool, outcome) is written at once, in the
background, and the next ones within `WINDOW_S` are counted and written as one entry
with their count when the window closes: a flood costs one write a second per kind, and
its log shows `RATE_LIMITED ×900` instead of nine hundred lines.

A batch (`app.tool_calls.batch`) is logged the same way, once answered: one entry per
outcome among its items, with their number (`record_later`).
"""

from __future__ import annotations

import asyncio
import logging

from app.request_log.service import CallEntry, record

logger = logging.getLogger(__name__)

WINDOW_S = 1.0
# Kinds counted at once in one process, and writes waiting for Redis; past either (a
# stalled Redis under a flood) entries are dropped rather than piling up.
MAX_OPEN_WINDOWS = 10_000
MAX_PENDING_WRITES = 1_000

Kind = tuple[str, str, str, str, str, str]


class _Window:
    """The refusals of one kind after the first, within its window."""

    __slots__ = ("first", "count")

    def __init__(self) -> None:
        self.first: CallEntry | None = None
        self.count = 0


class RefusalLog:
    """Per event loop (one per api process): the open windows and the pending writes."""

    def __init__(self) -> None:
        self._open: dict[Kind, _Window] = {}
        self._pending: set[asyncio.Task[None]] = set()

    def add(self, user_id: str, entry: CallEntry) -> None:
        kind = (
            user_id,
            entry.principal_type,
            entry.principal_id,
            entry.tool,
            entry.outcome,
            entry.surface or "",
        )
        window = self._open.get(kind)
        if window is not None:
            window.first = window.first or entry
            window.count += 1
            return
        if len(self._open) >= MAX_OPEN_WINDOWS:
            logger.warning("request log: %d refusal windows open; one dropped", len(self._open))
            return
        self._open[kind] = _Window()
        self.write(user_id, entry)
        asyncio.get_running_loop().call_later(WINDOW_S, self._close, kind)

    def _close(self, kind: Kind) -> None:
        window = self._open.pop(kind, None)
        if window is not None and window.first is not None:  # its time and latency for all
            self.write(kind[0], window.first._replace(calls=window.count))

    def write(self, user_id: str, *entries: CallEntry) -> None:
        """Write entries in the background, unless too many writes are waiting already."""
        if len(self._pending) >= MAX_PENDING_WRITES:
            logger.warning("request log: %d writes waiting; one dropped", len(self._pending))
            return
        task = asyncio.get_running_loop().create_task(record(user_id, *entries))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)


_logs: dict[asyncio.AbstractEventLoop, RefusalLog] = {}


def _log() -> RefusalLog:
    loop = asyncio.get_running_loop()
    log = _logs.get(loop)
    if log is None:
        _logs.clear()  # a loop of its own per process; tests start new ones
        log = _logs[loop] = RefusalLog()
    return log


def record_refusal(user_id: str, entry: CallEntry) -> None:
    """Log a refused call after its answer (see the module doc); never waits."""
    _log().add(user_id, entry)


def record_later(user_id: str, entries: list[CallEntry]) -> None:
    """Write these entries in the background, as they are (a batch's, after its answer)."""
    if entries:
        _log().write(user_id, *entries)
