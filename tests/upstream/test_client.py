from __future__ import annotations

import time

import fakeredis
import pytest
import redis

from app.kit.errors import UpstreamUnavailable
from app.upstream.client import RetryPolicy, UpstreamClient, UpstreamStatusError
from tests.fakes.upstream import FakeUpstream

FAST = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=0.02, max_retry_after_s=0.5)


def client_for(upstream: FakeUpstream, cache: redis.Redis | None = None) -> UpstreamClient:
    return UpstreamClient("census", f"{upstream.url}/data", policy=FAST, cache=cache)


ZCTA = {"get": "NAME,B01003_001E", "for": "zip code tabulation area:94103"}


class TestRetries:
    def test_5xx_is_retried_until_success(self, upstream: FakeUpstream) -> None:
        upstream.fail("census", status=503, count=2)
        response = client_for(upstream).get("/2023/acs/acs5", ZCTA)
        assert response.json()[1][0] == "ZCTA5 94103"
        assert upstream.requests("census") == 3

    def test_429_honours_retry_after(self, upstream: FakeUpstream) -> None:
        upstream.fail("census", status=429, count=1, retry_after="0.3")
        started = time.monotonic()
        response = client_for(upstream).get("/2023/acs/acs5", ZCTA)
        assert response.status_code == 200
        assert time.monotonic() - started >= 0.3
        assert upstream.requests("census") == 2

    def test_other_4xx_is_not_retried(self, upstream: FakeUpstream) -> None:
        upstream.fail("census", status=400, count=1)
        with pytest.raises(UpstreamStatusError) as caught:
            client_for(upstream).get("/2023/acs/acs5", ZCTA)
        assert caught.value.status == 400
        assert upstream.requests("census") == 1

    def test_exhausted_retries_are_upstream_unavailable(self, upstream: FakeUpstream) -> None:
        upstream.fail("census", status=502, count=-1)
        with pytest.raises(UpstreamUnavailable):
            client_for(upstream).get("/2023/acs/acs5", ZCTA)
        assert upstream.requests("census") == FAST.attempts

    def test_a_hanging_upstream_times_out(self, upstream: FakeUpstream) -> None:
        upstream.fail("census", hang_s=2.0, count=-1)
        client = UpstreamClient(
            "census",
            f"{upstream.url}/data",
            timeout_s=0.2,
            policy=RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.01),
        )
        started = time.monotonic()
        with pytest.raises(UpstreamUnavailable):
            client.get("/2023/acs/acs5", ZCTA)
        assert time.monotonic() - started < 1.5

    def test_unreachable_host_is_upstream_unavailable(self) -> None:
        from app.kit.embedded_redis import free_port

        client = UpstreamClient("census", f"http://127.0.0.1:{free_port()}", policy=FAST)
        with pytest.raises(UpstreamUnavailable):
            client.get("/x")


class TestCache:
    def test_second_identical_fetch_is_served_from_cache(self, upstream: FakeUpstream) -> None:
        client = client_for(upstream, cache=fakeredis.FakeRedis())

        def fetch() -> bytes:
            return client.get("/2023/acs/acs5", ZCTA).content

        first = client.cached(("acs", "94103"), fetch)
        second = client.cached(("acs", "94103"), fetch)
        assert first == second
        assert upstream.requests("census") == 1

    def test_errors_are_not_cached(self, upstream: FakeUpstream) -> None:
        client = client_for(upstream, cache=fakeredis.FakeRedis())
        upstream.fail("census", status=503, count=-1)

        def fetch() -> bytes:
            return client.get("/2023/acs/acs5", ZCTA).content

        with pytest.raises(UpstreamUnavailable):
            client.cached(("acs", "94103"), fetch)
        upstream.clear()
        assert b"94103" in client.cached(("acs", "94103"), fetch)
