"""Task events, what Flower lists: a real worker sends them for its billing and
maintenance tasks, and for tool calls only with GEOSVC_TOOL_TASK_EVENTS (they cost a
worker about as much CPU per call as the lookup itself)."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from tests.support.celery_worker import CeleryWorker, start_celery_worker
from tests.support.fixtures import Backend

RUN_TOOL_TASK = "tools.run"
# Any task of the billing queue will do: an empty outbox drains in a moment.
BILLING_TASK = "billing.drain_usage_outbox"


class EventLog:
    """Every task event the broker carries, captured from a thread (as Flower does)."""

    def __init__(self, app: Celery) -> None:
        self.events: list[dict[str, Any]] = []
        self._receiver = app.events.Receiver(
            app.connection_for_read(), handlers={"*": self.events.append}, app=app
        )
        self._thread = threading.Thread(target=self._receiver.capture, daemon=True)

    def __enter__(self) -> EventLog:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._receiver.should_stop = True  # capture() checks it at least every second
        self._thread.join(10)
        self._receiver.connection.release()

    def wait_until_listening(self, app: Celery, deadline_s: float = 30) -> None:
        """Events are published, not queued: send billing tasks until one is heard."""
        deadline = time.monotonic() + deadline_s
        while True:
            probe = app.send_task(BILLING_TASK)
            try:
                self.wait_for(probe.id, "task-succeeded", deadline_s=2)
                return
            except AssertionError:
                if time.monotonic() > deadline:
                    raise

    def types_for(self, task_id: str) -> set[str]:
        return {event["type"] for event in list(self.events) if event.get("uuid") == task_id}

    def wait_for(self, task_id: str, event_type: str, deadline_s: float = 20) -> None:
        deadline = time.monotonic() + deadline_s
        while event_type not in self.types_for(task_id):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {event_type} for {task_id}: {self.events[-5:]}")
            time.sleep(0.02)


@pytest.fixture
def events_worker(
    backend: Backend, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[CeleryWorker]:
    if backend.name != "sqlite":
        pytest.skip("one backend is enough: events do not depend on the database")
    # A key prefix of its own: no other test's worker takes these tasks.
    prefix = f"events-{secrets.token_hex(4)}:"
    env = backend.env(GEOSVC_TOOL_TASK_EVENTS=request.param, GEOSVC_REDIS_KEY_PREFIX=prefix)
    worker = start_celery_worker(env, tmp_path / "worker.log", concurrency=1)
    yield worker
    worker.stop()
    client = redis.Redis.from_url(backend.redis_url)
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        client.delete(key)
    client.close()


def run_both(worker: CeleryWorker) -> tuple[EventLog, str, str]:
    """A tool call, then a billing task, each to its end, while events are captured."""
    app = worker.client
    with EventLog(app) as log:
        log.wait_until_listening(app)
        tool = app.send_task(RUN_TOOL_TASK, args=["get_population", {"postal_code": "94103"}])
        reply = tool.get(timeout=30)
        assert reply.get("structured", {}).get("population", 0) > 0, reply
        billing = app.send_task(BILLING_TASK)  # it stores no result: its events tell
        # Events of one worker arrive in order: the billing task's last event comes
        # after anything the earlier tool task sent.
        log.wait_for(billing.id, "task-succeeded")
    return log, tool.id, billing.id


@pytest.mark.parametrize("events_worker", ["0"], indirect=True)
def test_tool_calls_send_no_task_events_by_default(events_worker: CeleryWorker) -> None:
    log, tool_id, billing_id = run_both(events_worker)
    assert {"task-received", "task-started", "task-succeeded"} <= log.types_for(billing_id)
    assert log.types_for(tool_id) == set()


@pytest.mark.parametrize("events_worker", ["1"], indirect=True)
def test_the_setting_turns_tool_task_events_on(events_worker: CeleryWorker) -> None:
    log, tool_id, _ = run_both(events_worker)
    log.wait_for(tool_id, "task-succeeded")
    assert {"task-received", "task-started"} <= log.types_for(tool_id)
