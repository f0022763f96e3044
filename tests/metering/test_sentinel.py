"""One Redis under Sentinel (`GEOSVC_REDIS_SENTINELS`, issue 56 item 3): the settings that
need it, Celery's result backend built for it, and the app's clients (sync, asyncio, the
result backend) following the replica the Sentinels promote once the primary is killed.
The drill with calls under load is `bench/sentinel_failover.py`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis
from pydantic import ValidationError

from app.kit.config import Settings
from app.kit.redis_client import async_redis, reset_clients, sync_redis
from app.queue.celery import celery_config, sentinel_backend_url
from app.runtime import reload_settings
from tests.support.redis_cluster import ClusterStartFailed
from tests.support.redis_sentinel import MASTER_NAME, LocalSentinel, local_sentinel
from tests.support.services import REQUIRE_SERVICES

BROKER = "amqp://geosvc@10.0.0.2:5672/geosvc"
SENTINELS = "10.0.0.3:26379,10.0.0.4:26379"


class TestSettings:
    @pytest.mark.parametrize(
        ("changes", "refused"),
        [
            ({"broker_url": None}, "GEOSVC_BROKER_URL"),
            ({"redis_url": None}, "GEOSVC_REDIS_URL"),
            ({"redis_cluster": True}, "GEOSVC_REDIS_CLUSTER"),
            ({"redis_sentinels": "10.0.0.3"}, "not host:port"),
        ],
        ids=["no broker", "no url", "and a cluster", "no port"],
    )
    def test_a_sentinel_setup_missing_a_part_is_refused(
        self, changes: dict[str, object], refused: str
    ) -> None:
        values = {
            "redis_url": "redis://:pw@primary:6379/2",
            "redis_sentinels": SENTINELS,
            "broker_url": BROKER,
            **changes,
        }
        with pytest.raises(ValidationError, match=refused):
            Settings(**values)  # type: ignore[arg-type]

    def test_the_result_backend_asks_every_sentinel_with_the_urls_database(self) -> None:
        settings = Settings(
            redis_url="redis://:pw@primary:6379/2",
            redis_sentinels=SENTINELS,
            redis_sentinel_master="geo",
            broker_url=BROKER,
        )
        assert settings.sentinel_addresses() == [("10.0.0.3", 26379), ("10.0.0.4", 26379)]
        assert sentinel_backend_url(settings) == (
            "sentinel://:pw@10.0.0.3:26379/2;sentinel://:pw@10.0.0.4:26379/2"
        )
        config = celery_config(settings)
        assert config["result_backend"].endswith(
            ":SentinelResultBackend+" + sentinel_backend_url(settings)
        )
        assert config["result_backend_transport_options"]["master_name"] == "geo"


@pytest.fixture
def sentinel(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalSentinel]:
    try:
        with local_sentinel() as setup:
            monkeypatch.setenv("GEOSVC_REDIS_URL", f"redis://127.0.0.1:{setup.primary.port}/0")
            monkeypatch.setenv("GEOSVC_REDIS_SENTINELS", setup.addresses)
            monkeypatch.setenv("GEOSVC_REDIS_SENTINEL_MASTER", MASTER_NAME)
            monkeypatch.setenv("GEOSVC_BROKER_URL", "memory://")
            monkeypatch.setenv("GEOSVC_REDIS_KEY_PREFIX", "sentinel-test:")
            reload_settings()
            reset_clients()
            yield setup
    except ClusterStartFailed as exc:
        if REQUIRE_SERVICES:
            raise
        pytest.skip(str(exc))
    finally:
        monkeypatch.undo()
        reload_settings()
        reset_clients()


def test_the_clients_follow_the_replica_sentinel_promotes(sentinel: LocalSentinel) -> None:
    from app.queue.celery import SentinelResultBackend, celery_app

    store = sync_redis()
    store.set("sentinel-test:k", 1)
    store.execute_command("WAIT", 1, 2000)  # on the replica before the crash
    backend = SentinelResultBackend(app=celery_app, url=sentinel_backend_url_now())
    backend.set("sentinel-test:meta", "before")

    sentinel.primary.kill9()
    sentinel.wait_promoted()

    def until_it_answers() -> int:
        for _ in range(100):
            try:
                return int(store.incr("sentinel-test:k"))
            except redis.ConnectionError:
                continue  # the dead primary's connections go first
        raise AssertionError("the sync client never reached the new primary")

    assert until_it_answers() == 2

    async def from_async() -> str | None:
        client = async_redis()
        for _ in range(100):
            try:
                return await client.get("sentinel-test:k")
            except redis.ConnectionError:
                continue
        raise AssertionError("the asyncio client never reached the new primary")

    assert asyncio.run(from_async()) == "2"
    backend.set("sentinel-test:meta", "after")
    with sentinel.replica.client() as promoted:
        assert promoted.get("sentinel-test:meta") == "after"


def sentinel_backend_url_now() -> str:
    from app.kit.config import get_settings

    return sentinel_backend_url(get_settings())
