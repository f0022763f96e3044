"""Beat schedules of our own."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery.schedules import schedstate, schedule

logger = logging.getLogger(__name__)


class EveryIf(schedule):
    """Every `run_every`, but sent only while `wanted()` says so; else beat asks again one
    interval later. For a safety net that usually finds nothing to do: beat asks a cheap
    question instead of sending a task that wakes a worker for nothing.

    `wanted` must be a module-level function (beat pickles its schedule). When it raises,
    the task is sent (the task decides). Needs Celery's beat to re-heap an entry that is
    not due yet (celery#7649, in this version), else it would hold back the entries behind.
    """

    def __init__(
        self,
        run_every: float | timedelta,
        wanted: Callable[[], bool],
        relative: bool = False,
        nowfun: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__(run_every, relative=relative, nowfun=nowfun)
        self.wanted = wanted

    def is_due(self, last_run_at: Any) -> schedstate:
        due, next_s = super().is_due(last_run_at)
        if not due:
            return schedstate(False, next_s)
        try:
            send = bool(self.wanted())
        except Exception:  # cannot tell (e.g. Redis down): send, the task copes
            logger.warning("beat: %s failed; sending the task", self.wanted.__qualname__)
            send = True
        return schedstate(send, next_s if send else self.seconds)

    def __repr__(self) -> str:
        return f"<EveryIf {self.human_seconds} if {self.wanted.__qualname__}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return self.__class__, (self.run_every, self.wanted, self.relative, self.nowfun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EveryIf):
            return self.run_every == other.run_every and self.wanted == other.wanted
        return NotImplemented
