"""A Redis Cluster in bad states under metered calls (issue 56): a slot moving mid-call
(MOVED, ASK, TRYAGAIN), the node of an account's slot unreachable, keys of one command on
two slots (CROSSSLOT). Each call answers its data and is billed, or answers a retryable
refusal (503 UNAVAILABLE, `retryable: true`) and is charged nothing; never a 500.

The moving and unreachable states run on a cluster of their own (they reshard and pause
its nodes), with an api and a worker on it; CROSSSLOT on the session's cluster.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis
from pydantic import ValidationError
from redis.crc import key_slot

from app.kit.config import Settings
from app.kit.errors import ServiceUnavailable, unavailable_for
from app.kit.redis_client import sync_redis
from app.metering.keys import counter_key, reservations_key
from app.metering.scripts import release_script
from tests.support.celery_worker import CeleryWorker
from tests.support.factories import sign_up
from tests.support.fixtures import cluster_settings, running_server, running_worker
from tests.support.live_server import TEST_RUN_PREFIX, LiveServer, service_env
from tests.support.redis_cluster import (
    ClusterStartFailed,
    LocalCluster,
    local_cluster,
    wait_until,
)
from tests.support.services import REQUIRE_SERVICES

JSON = {"Accept": "application/json"}
CALL = ("/v1/population", {"postal_code": "10001"})


@dataclass
class Stack:
    cluster: LocalCluster
    server: LiveServer
    worker: CeleryWorker


@pytest.fixture(scope="module")
def moving_cluster(
    redis_url: str, geodata_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A cluster of its own (a long node timeout: a paused node is not failed over) with an
    api and a worker on it; Celery's broker is the test Redis."""
    with ExitStack() as stack:
        try:
            cluster = stack.enter_context(local_cluster(node_timeout_ms=30_000))
        except ClusterStartFailed as exc:
            if REQUIRE_SERVICES:
                raise
            pytest.skip(str(exc))
        logs = tmp_path_factory.mktemp("cluster-states")
        env = service_env(
            database_url=f"sqlite:///{logs / 'geosvc.db'}",
            redis_url=cluster.url,
            data_dir=geodata_dir,
            GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}states:",
            **cluster_settings(redis_url),
        )
        server = stack.enter_context(running_server(env, logs / "server.log"))
        worker = stack.enter_context(running_worker(env, logs / "worker.log"))
        yield Stack(cluster, server, worker)


@dataclass
class Caller:
    """One account calling /v1 in a thread until told to stop; keeps every answer."""

    http: httpx.Client
    key: str
    user_id: str
    answers: list[httpx.Response] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def call(self) -> httpx.Response:
        path, query = CALL
        headers = {**JSON, "Authorization": f"Bearer {self.key}"}
        response = self.http.get(path, params=query, headers=headers)
        self.answers.append(response)
        return response

    def run_until_stopped(self) -> threading.Thread:
        def loop() -> None:
            while not self._stop.is_set():
                self.call()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        return thread

    def stop(self, thread: threading.Thread) -> None:
        self._stop.set()
        thread.join(timeout=60)

    def used(self) -> int:
        return int(self.http.get("/usage").json()["used"])


def new_caller(server: LiveServer) -> Caller:
    client = httpx.Client(base_url=server.url, timeout=30)
    user_id = sign_up(client)["userId"]
    key = client.post("/api-keys", json={"name": "cluster"}).json()["plaintext"]
    return Caller(client, key, user_id)


def assert_answered_or_refused_retryably(caller: Caller) -> tuple[int, int]:
    """Every answer data (200) or UNAVAILABLE (503, retryable); (answered, refused)."""
    statuses = [response.status_code for response in caller.answers]
    assert set(statuses) <= {200, 503}, [r.text for r in caller.answers if r.status_code > 503]
    for response in caller.answers:
        if response.status_code == 503:
            error = response.json()["error"]
            assert error["code"] == "UNAVAILABLE"
            assert error["retryable"] is True
    return statuses.count(200), statuses.count(503)


def node_id(client: redis.Redis) -> str:
    return str(client.execute_command("CLUSTER", "MYID"))


def move_slot(cluster: LocalCluster, slot: int, between_keys: object) -> None:
    """Move `slot` to another master as `redis-cli --cluster reshard` does: IMPORTING on
    the target, MIGRATING on the source, its keys one by one (`between_keys()` after each,
    so calls meet the slot half moved: ASK, TRYAGAIN), then the new owner everywhere."""
    source = cluster.node_of_slot(slot)
    target = next(node for node in cluster.nodes if node is not source)
    src, dst = source.client(), target.client()
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(src))
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(dst))
    while keys := src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1):
        src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *keys)
        between_keys()  # type: ignore[operator]
    for node in cluster.nodes:
        node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", node_id(dst))


def calls_made(caller: Caller, more: int) -> None:
    """Wait (with a deadline) until the caller has made `more` calls beyond now."""
    goal = len(caller.answers) + more
    wait_until(lambda: len(caller.answers) >= goal, f"{more} more calls", deadline_s=60)


class TestSlotMovingMidCall:
    def test_calls_are_answered_or_refused_retryably_and_charged_once(
        self, moving_cluster: Stack
    ) -> None:
        caller = new_caller(moving_cluster.server)
        assert caller.call().status_code == 200  # the account's keys exist in its slot
        slot = key_slot(caller.user_id.encode())
        before = moving_cluster.cluster.node_of_slot(slot)

        thread = caller.run_until_stopped()
        calls_made(caller, 3)
        move_slot(moving_cluster.cluster, slot, lambda: calls_made(caller, 2))
        calls_made(caller, 5)
        caller.stop(thread)

        assert moving_cluster.cluster.node_of_slot(slot) is not before
        answered, _refused = assert_answered_or_refused_retryably(caller)
        assert answered >= 5  # calls go on after the move
        # A refused call charged nothing; every answered one is billed. A commit the moving
        # slot kept refusing still answers its data (its usage event went to the outbox
        # in the same round trip): the counter may lag the ledger until reconciliation.
        assert caller.used() <= answered
        wait_until(lambda: ledger_rows(moving_cluster.server, caller) == answered, "billed")


def ledger_rows(server: LiveServer, caller: Caller) -> int:
    """The caller's rows in the ledger (the worker drains the outbox into it)."""
    database = server.env["GEOSVC_DATABASE_URL"].removeprefix("sqlite:///")
    with closing(sqlite3.connect(database)) as connection:
        query = "SELECT COUNT(*) FROM usage_events WHERE user_id = ?"
        return int(connection.execute(query, (caller.user_id,)).fetchone()[0])


class TestNodeUnreachable:
    def test_calls_are_refused_retryably_then_resume(self, moving_cluster: Stack) -> None:
        caller = new_caller(moving_cluster.server)
        assert caller.call().status_code == 200
        node = moving_cluster.cluster.node_of_slot(key_slot(caller.user_id.encode()))

        os.kill(node.process.pid, signal.SIGSTOP)  # unresponsive: every command times out
        try:
            refused = caller.call()
        finally:
            os.kill(node.process.pid, signal.SIGCONT)
        wait_until(lambda: caller.call().status_code == 200, "calls to resume", deadline_s=30)

        assert refused.status_code == 503, refused.text
        answered, refusals = assert_answered_or_refused_retryably(caller)
        assert refusals >= 1
        assert caller.used() == answered


class TestCrossSlot:
    """Keys of two accounts in one script: a bug, but a refusal, not a 500."""

    def test_the_clients_crossslot_is_a_retryable_refusal(self, use_redis: dict[str, str]) -> None:
        if os.environ.get("GEOSVC_REDIS_CLUSTER") != "true":
            pytest.skip("CROSSSLOT exists on a cluster only")
        keys = [counter_key("usr_a", "2026-01"), reservations_key("usr_b", "2026-01")]
        with pytest.raises(redis.exceptions.RedisClusterException) as raised:
            release_script.run(sync_redis(), keys, ["res_x"])

        refusal = unavailable_for(raised.value)

        assert isinstance(refusal, ServiceUnavailable)
        assert refusal.status == 503
        assert refusal.to_body()["error"]["retryable"] is True

    def test_a_nodes_crossslot_reply_is_a_retryable_refusal(
        self, use_redis: dict[str, str]
    ) -> None:
        if os.environ.get("GEOSVC_REDIS_CLUSTER") != "true":
            pytest.skip("CROSSSLOT exists on a cluster only")
        node = redis.Redis.from_url(os.environ["GEOSVC_REDIS_URL"])
        with pytest.raises(redis.ResponseError) as raised:
            node.execute_command("MSET", "{usr_a}x", 1, "{usr_b}y", 2)
        node.close()

        refusal = unavailable_for(raised.value)

        assert isinstance(refusal, ServiceUnavailable)
        assert refusal.to_body()["error"]["retryable"] is True


class TestSettings:
    @pytest.mark.parametrize(
        "broker", [None, "redis://10.0.0.1:7000/0"], ids=["no broker", "the cluster"]
    )
    def test_a_cluster_is_refused_as_celerys_broker(self, broker: str | None) -> None:
        with pytest.raises(ValidationError, match="GEOSVC_BROKER_URL"):
            Settings(redis_url="redis://10.0.0.1:7000/0", redis_cluster=True, broker_url=broker)

    def test_a_cluster_with_a_broker_of_its_own_is_accepted(self) -> None:
        settings = Settings(
            redis_url="redis://10.0.0.1:7000/0",
            redis_cluster=True,
            broker_url="amqp://geosvc@10.0.0.2:5672/geosvc",
            outbox_buckets=8,
        )
        assert settings.redis_cluster
