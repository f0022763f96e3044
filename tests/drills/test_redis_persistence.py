"""Production refuses a Redis that a crash could empty: the usage outbox lives there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from drill_stack import RedisServer

from app.kit.redis_client import persistence_problem
from tests.support.live_server import PRODUCTION_ENV, service_env, start_live_server
from tests.support.services import REQUIRE_SERVICES

pytestmark = pytest.mark.drill


@pytest.fixture
def private_redis(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        if REQUIRE_SERVICES:
            raise RuntimeError("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path, request.param)
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("private_redis", [None], indirect=True)
def test_production_api_and_worker_refuse_a_redis_without_aof(
    private_redis: RedisServer, tmp_path: Path
) -> None:
    production = {k: v for k, v in PRODUCTION_ENV.items() if k != "GEOSVC_REDIS_AOF_CHECK"}
    env = {
        **production,
        "GEOSVC_REDIS_URL": private_redis.url,
        "GEOSVC_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}",
        "GEOSVC_DATA_DIR": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    for command in ("api", "worker"):
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", command],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode != 0
        assert "appendonly" in done.stderr, done.stderr
        assert "GEOSVC_REDIS_AOF_CHECK" in done.stderr, done.stderr


@pytest.mark.parametrize("private_redis", ["everysec", "always"], indirect=True)
def test_an_aof_fsynced_every_second_or_always_is_accepted(private_redis: RedisServer) -> None:
    assert persistence_problem(private_redis.client()) is None


@pytest.mark.parametrize("private_redis", ["everysec"], indirect=True)
def test_an_aof_fsynced_only_by_the_os_is_refused(private_redis: RedisServer) -> None:
    client = private_redis.client()
    client.config_set("appendfsync", "no")

    problem = persistence_problem(client)

    assert problem is not None
    assert "appendfsync no" in problem


@pytest.mark.parametrize("private_redis", ["everysec"], indirect=True)
def test_readyz_reports_an_aof_turned_off_after_start(
    private_redis: RedisServer, tmp_path: Path
) -> None:
    env = service_env(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite'}",
        redis_url=private_redis.url,
        data_dir=tmp_path,
        **{k: v for k, v in PRODUCTION_ENV.items() if k != "GEOSVC_REDIS_AOF_CHECK"},
    )
    server = start_live_server(env, tmp_path / "server.log")
    try:
        token = PRODUCTION_ENV["GEOSVC_METRICS_TOKEN"]  # the details need the metrics token
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=server.url, timeout=10, headers=auth) as http:
            assert http.get("/readyz").json()["redisPersistence"] == "ok"

            private_redis.client().config_set("appendonly", "no")
            ready = http.get("/readyz")

        assert ready.status_code == 200  # a report: every replica shares this Redis
        assert "appendonly no" in ready.json()["redisPersistence"]
    finally:
        server.stop()
