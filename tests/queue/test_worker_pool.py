"""The `tools` worker's pool: prefork per CPU while every tool is embedded, threads once
a tool goes upstream; a pool's CPU priority; and the Redis broker transport's shared
client."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from app.kit.config import Settings
from app.queue.broker import TRANSPORT
from app.queue.celery import celery_config
from app.worker_start import worker_pool
from tests.support.celery_worker import launch_celery_worker, wait_until_ready
from tests.support.fixtures import Backend
from tests.support.services import migrate

THREADS = "celery.concurrency.thread:TaskPool"
PREFORK = "celery.concurrency.prefork:TaskPool"


class TestDefaultPool:
    def test_every_tool_embedded_is_prefork_one_process_per_cpu(self) -> None:
        assert worker_pool("tools,billing", Settings()) == ("prefork", None)

    @pytest.mark.parametrize(
        "settings",
        [
            {"upstream_tools": {"geocode"}},
            {"tool_providers": {"search_nearby": "embedded-then-upstream"}},
            {"tool_providers": {"reverse_geocode": "upstream-then-embedded"}},
        ],
    )
    def test_a_tool_upstream_is_threads(self, settings: dict[str, Any]) -> None:
        assert worker_pool("tools", Settings(**settings)) == ("threads", 64)

    def test_a_policy_that_keeps_the_tool_embedded_wins(self) -> None:
        settings = Settings(upstream_tools={"geocode"}, tool_providers={"geocode": "embedded"})
        assert worker_pool("tools", settings) == ("prefork", None)

    def test_the_setting_chooses_when_not_auto(self) -> None:
        assert worker_pool("tools", Settings(tools_pool="threads", tools_concurrency=8)) == (
            "threads",
            8,
        )
        assert worker_pool("tools", Settings(tools_pool="prefork", upstream_tools={"geocode"})) == (
            "prefork",
            None,
        )

    def test_billing_alone_is_prefork_for_its_time_limits(self) -> None:
        assert worker_pool("billing", Settings(upstream_tools={"geocode"})) == ("prefork", None)


def pool_of(client: Celery, hostname: str) -> dict[str, Any]:
    stats = client.control.inspect([hostname], timeout=5.0, limit=1).stats() or {}
    return dict(stats[hostname]["pool"])


class TestWorkerProcess:
    def test_a_real_worker_picks_its_pool_from_the_tools(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        if backend.name != "sqlite":
            pytest.skip("one backend is enough: the pool does not depend on the database")
        upstream_env = backend.env(GEOSVC_UPSTREAM_TOOLS='["geocode"]')
        migrate(upstream_env)  # one database for both
        embedded = launch_celery_worker(backend.env(), tmp_path / "embedded.log")
        upstream = launch_celery_worker(upstream_env, tmp_path / "upstream.log")
        try:
            embedded_pool = pool_of(wait_until_ready(embedded).client, embedded.hostname)
            upstream_pool = pool_of(wait_until_ready(upstream).client, upstream.hostname)
        finally:
            embedded.stop(wait=False)
            upstream.stop(wait=False)
        assert embedded_pool["implementation"] == PREFORK
        assert len(embedded_pool["processes"]) == embedded_pool["max-concurrency"] >= 1
        assert upstream_pool["implementation"] == THREADS
        assert upstream_pool["max-concurrency"] == 64

    def test_a_jobs_pool_runs_at_sched_idle_and_a_bulk_pool_niced(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        """Issue 59, item 6: a job's chunks get only the CPU nothing else wants, in the
        worker's main process and every pool process; free calls and billing (someone
        waits on them) stay in the normal class, niced."""
        if backend.name != "sqlite":
            pytest.skip("one backend is enough: the priority does not depend on the database")
        migrate(backend.env())
        jobs = launch_celery_worker(backend.env(), tmp_path / "jobs.log", queues="jobs")
        bulk = launch_celery_worker(
            backend.env(), tmp_path / "bulk.log", queues="tools.free,tools.heavy,billing"
        )
        try:
            jobs_pool = pool_of(wait_until_ready(jobs).client, jobs.hostname)
            bulk_pool = pool_of(wait_until_ready(bulk).client, bulk.hostname)
            jobs_pids = [jobs.process.pid, *jobs_pool["processes"]]
            bulk_pids = [bulk.process.pid, *bulk_pool["processes"]]
            jobs_policies = {os.sched_getscheduler(pid) for pid in jobs_pids}
            bulk_policies = {os.sched_getscheduler(pid) for pid in bulk_pids}
            bulk_niceness = {os.getpriority(os.PRIO_PROCESS, pid) for pid in bulk_pids}
        finally:
            jobs.stop(wait=False)
            bulk.stop(wait=False)
        assert len(jobs_pids) >= 2
        assert jobs_policies == {os.SCHED_IDLE}
        assert bulk_policies == {os.SCHED_OTHER}
        assert bulk_niceness == {os.getpriority(os.PRIO_PROCESS, 0) + 10}


class TestRedisBroker:
    def test_one_client_per_channel_with_the_key_prefix(self) -> None:
        settings = Settings(redis_url="redis://127.0.0.1:6379/0", redis_key_prefix="pfx:")
        app = Celery("t", set_as_current=False)
        app.conf.update(celery_config(settings))
        with app.connection_for_write() as connection:
            channel = connection.default_channel
            client = channel._create_client()
            assert connection.transport_cls == TRANSPORT
            assert channel._create_client() is client
            assert client.global_keyprefix == "pfx:"
            assert client.ping()

    def test_other_brokers_keep_their_transport(self) -> None:
        amqp = Settings(broker_url="amqp://guest:guest@127.0.0.1:5672//")
        assert celery_config(amqp)["broker_transport"] is None
        assert celery_config(Settings())["broker_transport"] is None
