"""The Celery application's configuration and the beat schedule."""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from celery import Celery, states
from celery.schedules import crontab

import workers
from app.kit.config import Settings
from app.queue.celery import (
    MAINTENANCE_TIME_LIMIT_S,
    TASK_TIME_LIMIT_S,
    VISIBILITY_TIMEOUT_S,
    ResultBackend,
    celery_app,
    celery_config,
    publish_declares,
    results_awaited_elsewhere,
)
from beat_schedule import BEAT_SCHEDULE
from tests.support.live_server import service_env


def redis_settings() -> Settings:
    return Settings(redis_url="redis://127.0.0.1:6379/0", redis_key_prefix="pfx:")


class TestResultBackend:
    def test_subscribes_on_send_unless_the_caller_awaits_results_itself(self) -> None:
        app = Celery("t", set_as_current=False)
        app.conf.update(celery_config(redis_settings()))
        backend = app.backend
        assert isinstance(backend, ResultBackend)
        subscribed: list[str] = []
        backend.result_consumer.consume_from = subscribed.append  # type: ignore[method-assign]

        backend.on_task_call(None, "a")
        with results_awaited_elsewhere():
            backend.on_task_call(None, "b")

        assert subscribed == ["a"]

    def test_a_tool_result_is_stored_without_reading_it_first(self, redis_url: str) -> None:
        """Celery keeps a stored success from being overwritten by reading it before each
        store; a tool call's result is read once and deleted, so its store skips the read
        (one Redis round trip less per call). Other tasks keep the protection."""
        settings = Settings(redis_url=redis_url, redis_key_prefix=f"t-{secrets.token_hex(4)}:")
        app = Celery("t", set_as_current=False)
        app.conf.update(celery_config(settings))
        backend = app.backend
        outcomes = {}
        for task in ("tools.run", "billing.drain_usage_outbox"):
            task_id = f"id-{secrets.token_hex(4)}"
            request = SimpleNamespace(task=task)
            backend.store_result(task_id, {"first": True}, states.SUCCESS, request=request)
            backend.store_result(task_id, {"second": True}, states.SUCCESS, request=request)
            outcomes[task] = backend.get_task_meta(task_id)["result"]
            backend.forget(task_id)
        assert outcomes == {
            "tools.run": {"second": True},
            "billing.drain_usage_outbox": {"first": True},
        }


class TestConfig:
    def test_redis_broker_and_backend_with_the_key_prefix(self) -> None:
        config = celery_config(redis_settings())

        assert config["broker_url"] == "redis://127.0.0.1:6379/0"
        backend = "app.queue.celery:ResultBackend+redis://127.0.0.1:6379/0"
        assert config["result_backend"] == backend
        assert config["broker_transport_options"]["global_keyprefix"] == "pfx:"
        assert config["result_backend_transport_options"] == {"global_keyprefix": "pfx:"}

    def test_json_only_late_acks_and_limits(self) -> None:
        config = celery_config(redis_settings())

        assert config["accept_content"] == config["result_accept_content"] == ["json"]
        assert config["task_serializer"] == config["result_serializer"] == "json"
        assert config["task_acks_late"] is True
        assert config["task_reject_on_worker_lost"] is True
        assert config["worker_prefetch_multiplier"] == 1
        assert config["task_soft_time_limit"] < config["task_time_limit"] == TASK_TIME_LIMIT_S
        # a running task is never handed to a second worker
        assert config["broker_transport_options"]["visibility_timeout"] == VISIBILITY_TIMEOUT_S
        assert VISIBILITY_TIMEOUT_S > MAINTENANCE_TIME_LIMIT_S > TASK_TIME_LIMIT_S

    def test_the_result_backends_redis_calls_are_bounded(self) -> None:
        """A result stored on a node that died silently fails over in seconds (Celery
        retries it), instead of holding the worker for Celery's default 120 s."""
        settings = Settings(
            redis_url="redis://127.0.0.1:6379/0", redis_cluster=True, broker_url="amqp://x/"
        )
        app = Celery("bounded", set_as_current=False)
        app.conf.update(celery_config(settings))

        params = app.backend.connparams
        assert params["socket_timeout"] == settings.redis_command_timeout_s
        assert 0 < params["socket_connect_timeout"] <= 2.0

    def test_a_queue_is_declared_with_each_message_only_where_it_must_be(self) -> None:
        for list_broker in ("redis://127.0.0.1:6379/0", "rediss://h:6380/0", "memory://"):
            assert publish_declares(list_broker) == (), list_broker
        assert publish_declares("amqp://guest:guest@127.0.0.1:5672//") is None  # Celery's default

    def test_without_redis_it_runs_in_memory(self) -> None:
        config = celery_config(Settings(redis_url=None))

        assert (config["broker_url"], config["result_backend"]) == ("memory://", "cache+memory://")

    def test_the_worker_edge_registers_and_routes_every_task(self) -> None:
        router = workers.celery_app.amqp.router

        assert workers.celery_app is celery_app
        assert celery_app.main == "geosvc"
        assert celery_app.conf.beat_schedule is BEAT_SCHEDULE
        assert "tools.run" in celery_app.tasks
        for name in ("billing.drain_usage_outbox", "metering.rollover", "metering.reconcile"):
            assert name in celery_app.tasks
            assert router.route({}, name)["queue"].name == "billing"
        assert router.route({}, "tools.run_tool")["queue"].name == "tools"
        # a bulk job's chunks on their own queue; beat's upkeep of jobs with billing's
        assert router.route({}, "jobs.run_chunk")["queue"].name == "jobs"
        for name in ("jobs.resume_stalled", "jobs.purge_expired"):
            assert name in celery_app.tasks
            assert router.route({}, name)["queue"].name == "billing"
        queues = {queue.name: queue for queue in celery_app.conf.task_queues}
        assert {name: q.exchange.name for name, q in queues.items()} == {
            "tools": "tools",
            "tools.free": "tools.free",
            "tools.heavy": "tools.heavy",
            "jobs": "jobs",
            "billing": "billing",
        }


class TestBeatSchedule:
    def test_rollover_at_midnight_utc_on_the_first(self) -> None:
        entry = BEAT_SCHEDULE["monthly-rollover"]
        schedule = entry["schedule"]

        assert entry["task"] == "metering.rollover"
        assert isinstance(schedule, crontab)
        assert (schedule.minute, schedule.hour, schedule.day_of_month) == ({0}, {0}, {1})
        assert schedule.month_of_year == set(range(1, 13))
        assert celery_app.conf.timezone == "UTC"
        assert celery_app.conf.enable_utc

    def test_reconcile_every_five_minutes(self) -> None:
        entry = BEAT_SCHEDULE["reconcile-usage"]

        assert entry["task"] == "metering.reconcile"
        assert entry["schedule"].minute == set(range(0, 60, 5))
        assert entry["schedule"].hour == set(range(24))

    def test_geosvc_beat_starts(self, redis_url: str, tmp_path: Path) -> None:
        env = service_env(
            database_url=f"sqlite:///{tmp_path / 'geosvc.db'}",
            redis_url=redis_url,
            data_dir=tmp_path,
        )
        log_path = tmp_path / "beat.log"
        with log_path.open("wb") as log:
            beat = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "beat"], env=env, stdout=log, stderr=log
            )
        try:
            deadline = time.monotonic() + 30
            while "beat: Starting" not in log_path.read_text(errors="replace"):
                assert beat.poll() is None, log_path.read_text(errors="replace")
                assert time.monotonic() < deadline, log_path.read_text(errors="replace")
                time.sleep(0.1)
        finally:
            beat.terminate()
            beat.wait(timeout=15)
        assert list(tmp_path.glob("celerybeat-schedule*"))
