"""Upstream etiquette against the fake providers: User-Agent with contact, the shared rate
limiter, errors inside HTTP 200, and the circuit breaker. Limiter and breaker state lives
in the test Redis (real when reachable) under a fresh key prefix per test."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from pydantic import ValidationError
from redis.backoff import NoBackoff
from redis.retry import Retry

from app.geodata.providers.upstream import UpstreamProvider
from app.geodata.tools.geocode import upstream as geocode_upstream
from app.geodata.tools.geocode.schemas import GeocodeArgs
from app.kit.breaker import CircuitBreaker
from app.kit.config import Settings
from app.kit.errors import UpstreamUnavailable
from app.upstream.client import RetryPolicy, UpstreamClient, user_agent
from app.upstream.overpass import OverpassApi
from app.upstream.ratelimit import RateLimiter
from tests.fakes.upstream import FakeUpstream
from tests.support.live_server import PRODUCTION_ENV

FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.01)
ZCTA = {"get": "NAME,B01003_001E", "for": "zip code tabulation area:94103"}


@pytest.fixture
def shared(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def prefix() -> str:
    return f"test-etiquette-{secrets.token_hex(4)}:"


def census_client(
    upstream: FakeUpstream,
    *,
    limiter: RateLimiter | None = None,
    breaker: CircuitBreaker | None = None,
) -> UpstreamClient:
    return UpstreamClient(
        "census", f"{upstream.url}/data", policy=FAST, limiter=limiter, breaker=breaker
    )


class TestUserAgent:
    def test_provider_sends_the_configured_contact(self, upstream: FakeUpstream) -> None:
        settings = Settings(
            nominatim_url=upstream.url,
            upstream_contact="geo-ops@example.com",
            base_url="https://geo.example.com",
            nominatim_rate_per_s=0,
        )
        geocode_upstream.answer(UpstreamProvider(settings), GeocodeArgs(query="Austin, TX"))
        [agent] = upstream.user_agents("nominatim")
        assert agent.startswith("geosvc/")
        assert "geo-ops@example.com" in agent
        assert "https://geo.example.com" in agent

    def test_production_refuses_an_upstream_without_a_contact(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        for key, value in PRODUCTION_ENV.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("GEOSVC_REDIS_URL", "redis://:s3cret-redis@redis:6379/0")
        monkeypatch.setenv("GEOSVC_DATABASE_URL", "postgresql+psycopg://db/geosvc")
        with pytest.raises(ValidationError, match="GEOSVC_UPSTREAM_CONTACT"):
            Settings(upstream_tools={"geocode"})
        with pytest.raises(ValidationError, match="GEOSVC_UPSTREAM_CONTACT"):
            Settings(tool_providers={"geocode": "embedded-then-upstream"})
        allowed = Settings(upstream_tools={"geocode"}, upstream_contact="ops@example.com")
        assert "ops@example.com" in user_agent(allowed.upstream_contact)

    def test_a_contact_cannot_inject_headers(self) -> None:
        with pytest.raises(ValidationError):
            Settings(upstream_contact="ops@example.com\r\nX-Evil: 1")


class TestRateLimiter:
    def test_parallel_calls_from_two_processes_are_spaced_by_the_rate(
        self, upstream: FakeUpstream, shared: redis.Redis, prefix: str
    ) -> None:
        rate, calls = 5.0, 6
        # Two clients with their own limiter objects on one key: two worker processes.
        clients = [
            census_client(
                upstream, limiter=RateLimiter("census", rate, client=shared, key_prefix=prefix)
            )
            for _ in range(2)
        ]
        start = time.monotonic()
        with ThreadPoolExecutor(calls) as pool:
            statuses = list(
                pool.map(
                    lambda i: clients[i % 2].get("/2023/acs/acs5", ZCTA).status_code, range(calls)
                )
            )
        assert statuses == [200] * calls
        arrivals = upstream.arrivals("census")
        assert len(arrivals) == calls
        # The last slot is (calls - 1) intervals after the first, which is no earlier than
        # the start: measured from the start, a late first sender (a loaded machine) cannot
        # shorten the span. Without the limiter the six arrive within milliseconds.
        assert arrivals[-1] - start >= 0.95 * (calls - 1) / rate

    def test_a_slot_beyond_the_wait_bound_fails_fast(
        self, upstream: FakeUpstream, shared: redis.Redis, prefix: str
    ) -> None:
        limiter = RateLimiter("census", 0.5, client=shared, key_prefix=prefix, max_wait_s=0.5)
        client = census_client(upstream, limiter=limiter)
        assert client.get("/2023/acs/acs5", ZCTA).status_code == 200
        with pytest.raises(UpstreamUnavailable) as refused:
            client.get("/2023/acs/acs5", ZCTA)
        assert refused.value.details["retryAfterSeconds"] >= 1
        assert upstream.requests("census") == 1

    def test_without_redis_the_limit_holds_per_process(self, upstream: FakeUpstream) -> None:
        # no retries: redis-py's default backoff would only slow the test down
        broken = redis.Redis(port=1, decode_responses=True, retry=Retry(NoBackoff(), 0))
        limiter = RateLimiter("census", 5.0, client=broken)
        client = census_client(upstream, limiter=limiter)
        start = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: client.get("/2023/acs/acs5", ZCTA), range(4)))
        arrivals = upstream.arrivals("census")
        assert len(arrivals) == 4
        assert arrivals[-1] - start >= 0.95 * 3 / 5.0  # as above: from the start


OVERPASS_QUERY = {"radius_m": 5000, "category": "cafe", "limit": 10}


class TestErrorsInside200:
    def overpass(self, upstream: FakeUpstream, cache: redis.Redis | None = None) -> OverpassApi:
        client = UpstreamClient("overpass", f"{upstream.url}/api", policy=FAST, cache=cache)
        return OverpassApi(client)

    @pytest.mark.parametrize(
        ("body", "media_type"),
        [
            (
                '{"version": 0.6, "elements": [], "remark": "runtime error: Query timed out '
                'in \\"query\\" at line 1 after 11 seconds."}',
                "application/json",
            ),
            (
                '{"elements": [], "remark": "runtime error: Query run out of memory using '
                'about 2048 MB of RAM."}',
                "application/json",
            ),
            (
                "<!DOCTYPE html><html><body><p>The server is probably too busy to handle "
                "your request.</p></body></html>",
                "text/html",
            ),
            ('<?xml version="1.0"?><osm><remark>runtime error</remark></osm>', "text/xml"),
        ],
    )
    def test_a_failure_in_a_200_is_retried_then_unavailable(
        self, upstream: FakeUpstream, body: str, media_type: str
    ) -> None:
        upstream.fail("overpass", status=200, count=-1, body=body, media_type=media_type)
        with pytest.raises(UpstreamUnavailable):
            self.overpass(upstream).nearby(30.267, -97.743, **OVERPASS_QUERY)
        assert upstream.requests("overpass") == FAST.attempts

    def test_a_failure_in_a_200_is_not_cached(
        self, upstream: FakeUpstream, redis_url: str, prefix: str
    ) -> None:
        api = self.overpass(upstream, cache=redis.Redis.from_url(redis_url))
        api.client.cache_prefix = prefix
        upstream.fail(
            "overpass",
            status=200,
            count=1,
            body='{"elements": [], "remark": "runtime error: Query timed out"}',
            media_type="application/json",
        )
        answer = api.nearby(30.267, -97.743, **OVERPASS_QUERY)  # retried after the remark
        assert len(answer.features) == 3
        assert upstream.requests("overpass") == 2
        again = api.nearby(30.267, -97.743, **OVERPASS_QUERY)
        assert len(again.features) == 3
        assert upstream.requests("overpass") == 2  # the good answer was cached, not the bad

    def test_a_benign_remark_is_an_answer(self, upstream: FakeUpstream) -> None:
        upstream.fail(
            "overpass",
            status=200,
            count=1,
            body='{"elements": [], "remark": "runtime remark: Timeout is 10 seconds."}',
            media_type="application/json",
        )
        assert self.overpass(upstream).nearby(30.267, -97.743, **OVERPASS_QUERY).features == []
        assert upstream.requests("overpass") == 1


class TestCircuitBreaker:
    def breaker(self, shared: redis.Redis, prefix: str, cooldown_s: float = 0.5) -> CircuitBreaker:
        return CircuitBreaker(
            "census",
            client=shared,
            key_prefix=prefix,
            failure_threshold=2,
            cooldown_s=cooldown_s,
            probe_lease_s=5.0,
        )

    def test_opens_after_k_failures_and_fails_fast_without_the_provider(
        self, upstream: FakeUpstream, shared: redis.Redis, prefix: str
    ) -> None:
        client = census_client(upstream, breaker=self.breaker(shared, prefix, cooldown_s=30))
        upstream.fail("census", status=503, count=-1)
        for _ in range(2):
            with pytest.raises(UpstreamUnavailable):
                client.get("/2023/acs/acs5", ZCTA)
        assert upstream.requests("census") == 2 * FAST.attempts
        with pytest.raises(UpstreamUnavailable) as fast:
            client.get("/2023/acs/acs5", ZCTA)
        assert 1 <= fast.value.details["retryAfterSeconds"] <= 30
        assert upstream.requests("census") == 2 * FAST.attempts  # not asked again
        # Another process (its own breaker object) sees the same open breaker.
        other = census_client(upstream, breaker=self.breaker(shared, prefix, cooldown_s=30))
        with pytest.raises(UpstreamUnavailable):
            other.get("/2023/acs/acs5", ZCTA)
        assert upstream.requests("census") == 2 * FAST.attempts

    def test_half_opens_after_the_cooldown_with_one_probe(
        self, upstream: FakeUpstream, shared: redis.Redis, prefix: str
    ) -> None:
        client = census_client(upstream, breaker=self.breaker(shared, prefix))
        upstream.fail("census", status=503, count=2 * FAST.attempts)
        for _ in range(2):
            with pytest.raises(UpstreamUnavailable):
                client.get("/2023/acs/acs5", ZCTA)
        opened_with = upstream.requests("census")
        deadline = time.monotonic() + 10
        while True:  # poll: fail fast until the cool-down has passed
            try:
                response = client.get("/2023/acs/acs5", ZCTA)
                break
            except UpstreamUnavailable as exc:
                refusal = exc.details
            assert "retryAfterSeconds" in refusal
            assert upstream.requests("census") == opened_with
            assert time.monotonic() < deadline, "the breaker never half-opened"
            time.sleep(0.05)
        assert response.status_code == 200
        assert upstream.requests("census") == opened_with + 1  # exactly one probe
        client.get("/2023/acs/acs5", ZCTA)  # closed again: calls go through
        assert upstream.requests("census") == opened_with + 2

    def test_a_failed_probe_opens_it_again(
        self, upstream: FakeUpstream, shared: redis.Redis, prefix: str
    ) -> None:
        client = census_client(upstream, breaker=self.breaker(shared, prefix))
        upstream.fail("census", status=503, count=-1)
        for _ in range(2):
            with pytest.raises(UpstreamUnavailable):
                client.get("/2023/acs/acs5", ZCTA)
        opened_with = upstream.requests("census")
        deadline = time.monotonic() + 10
        while upstream.requests("census") == opened_with:  # until the probe went out
            with pytest.raises(UpstreamUnavailable):
                client.get("/2023/acs/acs5", ZCTA)
            assert time.monotonic() < deadline, "the breaker never half-opened"
            time.sleep(0.05)
        assert upstream.requests("census") == opened_with + FAST.attempts  # one probe call
        with pytest.raises(UpstreamUnavailable) as fast:
            client.get("/2023/acs/acs5", ZCTA)
        assert "retryAfterSeconds" in fast.value.details
        assert upstream.requests("census") == opened_with + FAST.attempts

    def test_a_4xx_is_not_a_failure(
        self, upstream: FakeUpstream, shared: redis.Redis, prefix: str
    ) -> None:
        client = census_client(upstream, breaker=self.breaker(shared, prefix, cooldown_s=30))
        upstream.fail("census", status=400, count=3)
        for _ in range(3):
            with pytest.raises(Exception, match="400"):
                client.get("/2023/acs/acs5", ZCTA)
        assert client.get("/2023/acs/acs5", ZCTA).status_code == 200
