"""The one error mapping: an unexpected exception is a 500 in the envelope, no trace leaks;
a backing service's outage (a Redis failover's replies too) is a retryable 503."""

from __future__ import annotations

import httpx
import pytest
import redis
from redis._parsers.base import BaseParser
from redis.exceptions import RedisClusterException, SlotNotCoveredError

from app.kit.errors import unavailable_for
from app.main import create_app


async def test_unexpected_exceptions_are_500_in_the_envelope() -> None:
    app = create_app()

    @app.get("/_boom")
    def boom() -> None:
        raise RuntimeError("secret internals: /etc/passwd")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.get("/_boom")

    assert response.status_code == 500
    assert response.json() == {"error": {"code": "INTERNAL", "message": "Internal error"}}
    assert "secret" not in response.text


# What a Redis (Cluster) failover answers, as redis-py parses the replies (issue 56):
# a slot moved or moving, a node demoted to replica, a promoted one still loading, a shard
# down. Each is a retryable 503 UNAVAILABLE, never a 500.
FAILOVER_REPLIES = [
    "MOVED 3999 127.0.0.1:7002",
    "ASK 3999 127.0.0.1:7002",
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "READONLY You can't write against a read only replica.",
    "LOADING Redis is loading the dataset in memory",
    "CLUSTERDOWN The cluster is down",
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    "CROSSSLOT Keys in request don't hash to the same slot",
]


@pytest.mark.parametrize("reply", FAILOVER_REPLIES)
async def test_a_failovers_error_replies_are_retryable_503s(reply: str) -> None:
    app = create_app()

    @app.get("/_failover")
    def failover() -> None:
        raise BaseParser.parse_error(reply)

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.get("/_failover")

    assert response.status_code == 503, (reply, response.text)
    error = response.json()["error"]
    assert (error["code"], error["retryable"]) == ("UNAVAILABLE", True)


@pytest.mark.parametrize(
    "raised",
    [
        SlotNotCoveredError("slot 3999 is not covered by the cluster"),
        RedisClusterException("Redis Cluster cannot be connected"),
        redis.ConnectionError("Connection refused"),
        redis.TimeoutError("Timeout reading from socket"),
    ],
)
def test_a_cluster_clients_own_errors_are_unavailable(raised: Exception) -> None:
    assert unavailable_for(raised) is not None


def _raised_in(module: str, source: str) -> BaseException:
    """What `source` raises when it runs as code of `module` (its frame's module name)."""
    try:
        exec(compile(source, f"<{module}>", "exec"), {"__name__": module})
    except BaseException as exc:  # noqa: BLE001 - the exception is the result
        return exc
    raise AssertionError("nothing raised")


def test_a_connection_closed_under_redis_pys_pipeline_is_unavailable() -> None:
    """redis-py's asyncio cluster pipeline, after a failover closed its connection, raises
    an AttributeError from its own code (the cluster drill saw it): an outage, retryable.
    The same error from our code, or anyone else's, stays a fault (INTERNAL)."""
    writer_gone = "writer = None\nwriter.writelines([b'PING'])"
    assert unavailable_for(_raised_in("redis.asyncio.connection", writer_gone)) is not None
    assert unavailable_for(_raised_in("app.metering.service", writer_gone)) is None
    assert unavailable_for(_raised_in("redis.asyncio.cluster", "raise KeyError(1)")) is None
