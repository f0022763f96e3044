"""`EveryIf`: beat's interval schedule that sends only while there is something to do."""

from __future__ import annotations

import pickle
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import Celery
from celery.beat import Scheduler

from app.queue.schedules import EveryIf

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def yes() -> bool:
    return True


def no() -> bool:
    return False


def broken() -> bool:
    raise ConnectionError("Redis is down")


def every(seconds: float, wanted: Any) -> EveryIf:
    return EveryIf(seconds, wanted, nowfun=lambda: NOW)


class TestIsDue:
    def test_not_yet_due_asks_nothing(self) -> None:
        assert every(5, broken).is_due(NOW - timedelta(seconds=2)) == (False, 3)

    def test_due_and_wanted_is_sent(self) -> None:
        assert every(5, yes).is_due(NOW - timedelta(seconds=6)) == (True, 5)

    def test_due_but_not_wanted_asks_again_one_interval_later(self) -> None:
        assert every(5, no).is_due(NOW - timedelta(seconds=60)) == (False, 5)

    def test_when_the_question_fails_the_task_is_sent(self) -> None:
        assert every(5, broken).is_due(NOW - timedelta(seconds=6)) == (True, 5)

    def test_survives_beats_schedule_file(self) -> None:
        schedule = EveryIf(5.0, yes)
        copy = pickle.loads(pickle.dumps(schedule))

        assert copy == schedule
        assert copy.wanted is yes
        assert copy != EveryIf(5.0, no)


class RecordingScheduler(Scheduler):
    sent: list[str]

    def apply_entry(self, entry: Any, producer: Any = None) -> None:
        self.sent.append(entry.name)


def test_a_skipped_entry_does_not_hold_back_the_others() -> None:
    """Beat looks at the earliest entry only; one that is due but not sent must be put
    back behind the others (celery#7649), or they would never run."""
    app = Celery("t", set_as_current=False)
    app.conf.update(result_expires=None, beat_schedule={})
    scheduler = RecordingScheduler(app, lazy=True)
    scheduler.sent = []
    scheduler.update_from_dict(
        {
            "skipped": {"task": "skipped", "schedule": EveryIf(0.02, no)},
            "other": {"task": "other", "schedule": 0.1},
        }
    )
    deadline = time.monotonic() + 10
    while scheduler.sent.count("other") < 3:
        assert time.monotonic() < deadline, f"sent: {scheduler.sent}"
        time.sleep(max(0.0, min(scheduler.tick(), 0.01)))

    assert "skipped" not in scheduler.sent
