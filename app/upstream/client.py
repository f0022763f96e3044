"""HTTP client for upstream data providers: timeouts, narrow retries, a shared answer cache,
and the etiquette public providers ask for (an identifying User-Agent with a contact, a
shared rate limiter, a circuit breaker).

Retried: transport errors (connect/read failures, timeouts), 429 (honouring Retry-After up
to a cap), 5xx, and errors a provider reports inside a 200 answer (the `check` of a
request, e.g. Overpass's "runtime error" remarks). Never retried: other 4xx, which mean our
request is wrong or the thing does not exist; the provider decides what those mean. When
retries run out the caller gets `UpstreamUnavailable` (no credit charged) and the breaker
counts one failure; tool tasks are not retried by Celery (the caller has a deadline), so a
longer outage is an error the agent can retry. Every attempt waits for its rate-limiter
slot first.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import httpx
import redis
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from app.kit.breaker import CircuitBreaker, Passage
from app.kit.clock import utcnow
from app.kit.errors import UpstreamUnavailable
from app.observability import metrics
from app.upstream.ratelimit import RateLimiter

logger = logging.getLogger(__name__)


def user_agent(contact: str | None, site_url: str | None = None) -> str:
    """`geosvc/<version> (<site>; <contact>)`: who we are and how to reach the operator,
    as Nominatim's and Overpass's usage policies ask."""
    try:
        release = version("geosvc")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        release = "dev"
    details = "; ".join(part for part in (site_url, contact) if part)
    return f"geosvc/{release} ({details or 'hosted geodata for agents'})"


class CacheMiss(Exception):
    """Under `only_cached_answers()`, an answer would need a request to the provider."""


_cache_only: ContextVar[bool] = ContextVar("upstream_cache_only", default=False)


def answering_from_cache_only() -> bool:
    """Inside `only_cached_answers()`?"""
    return _cache_only.get()


@contextmanager
def only_cached_answers() -> Iterator[None]:
    """Serve upstream answers from the shared cache only; anything else raises CacheMiss.

    The api answers cache hits this way without a Celery hop, and never calls a provider.
    """
    token = _cache_only.set(True)
    try:
        yield
    finally:
        _cache_only.reset(token)


class UpstreamAnswerError(Exception):
    """A provider answered 200 with an error inside (an error page, a timeout remark)."""


class UpstreamStatusError(Exception):
    """A non-retryable 4xx answer; providers map it to NOT_FOUND or INVALID_ARGUMENT."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"upstream answered {status}")
        self.status = status
        self.body = body


class _RetryableStatus(Exception):
    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"upstream answered {response.status_code}")
        self.response = response


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0
    max_retry_after_s: float = 5.0


_RETRYABLE = (httpx.TransportError, _RetryableStatus, UpstreamAnswerError)


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, _RETRYABLE)


def retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, (parsedate_to_datetime(value) - utcnow()).total_seconds())
        except (TypeError, ValueError):
            return None


def _wait_for(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _RetryableStatus) and exc.response.status_code == 429:
            asked = retry_after_seconds(exc.response)
            if asked is not None:
                return min(asked, policy.max_retry_after_s)
        backoff = policy.base_delay_s * 2 ** (state.attempt_number - 1)
        return random.uniform(0, min(backoff, policy.max_delay_s))  # full jitter

    return wait


Check = Callable[[httpx.Response], None]


class UpstreamClient:
    """One upstream service (e.g. "nominatim"): base URL, timeouts, retries, cache,
    and optionally its shared rate limiter and circuit breaker.

    Thread-safe: a threads worker pool shares one client (and its connection pool).
    """

    def __init__(
        self,
        name: str,
        base_url: str,
        *,
        timeout_s: float = 5.0,
        policy: RetryPolicy | None = None,
        cache: redis.Redis | None = None,
        cache_ttl_s: int = 86_400,
        cache_prefix: str = "",
        headers: Mapping[str, str] | None = None,
        user_agent_header: str | None = None,
        limiter: RateLimiter | None = None,
        breaker: CircuitBreaker | None = None,
        max_connections: int = 100,
    ) -> None:
        self.name = name
        self.policy = policy or RetryPolicy()
        self.cache = cache
        self.cache_ttl_s = cache_ttl_s
        self.cache_prefix = cache_prefix
        self.limiter = limiter
        self.breaker = breaker
        self._http = httpx.Client(
            base_url=base_url,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0)),
            headers={"User-Agent": user_agent_header or user_agent(None), **(headers or {})},
            follow_redirects=True,
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
        )

    def close(self) -> None:
        self._http.close()

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> httpx.Response:
        return self.request("GET", path, params=params)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: Mapping[str, str] | None = None,
        check: Check | None = None,
    ) -> httpx.Response:
        """Send with retries; `check` raises UpstreamAnswerError for an error inside a 200."""
        if _cache_only.get():
            raise CacheMiss(self.name)
        passage = self.breaker.enter() if self.breaker is not None else Passage.CLEAN
        retrying = Retrying(
            stop=stop_after_attempt(self.policy.attempts),
            wait=_wait_for(self.policy),
            retry=retry_if_exception(_retryable),
            before_sleep=lambda _state: metrics.upstream_retry(self.name),
            reraise=True,
        )
        try:
            response = retrying(self._send_once, method, path, params, data, check)
        except UpstreamStatusError:
            if self.breaker is not None:
                self.breaker.succeeded(passage)  # a 4xx still proves the provider is up
            raise
        except _RETRYABLE as exc:
            metrics.upstream_error(self.name)
            logger.warning(
                "%s unavailable after %d attempts: %s", self.name, self.policy.attempts, exc
            )
            if self.breaker is not None:
                self.breaker.failed()
            raise UpstreamUnavailable(
                f"The {self.name} data provider is unavailable; no credit was charged. "
                "Try again shortly."
            ) from exc
        if self.breaker is not None:
            self.breaker.succeeded(passage)
        return response

    def _send_once(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        data: Mapping[str, str] | None,
        check: Check | None,
    ) -> httpx.Response:
        if self.limiter is not None:
            self.limiter.wait_for_slot()
        try:
            response = self._http.request(method, path, params=params, data=data)
        except httpx.TransportError:
            metrics.upstream_request(self.name, "transport_error")
            raise
        metrics.upstream_request(self.name, metrics.upstream_outcome(response.status_code))
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response)
        if response.status_code >= 400:
            raise UpstreamStatusError(response.status_code, response.text[:500])
        if check is not None:
            check(response)
        return response

    def cached(self, key_parts: tuple[object, ...], fetch: Callable[[], bytes]) -> bytes:
        """Answer from the shared cache, or fetch and remember (answers, never errors)."""
        if self.cache is None:
            return fetch()
        key = (
            f"{self.cache_prefix}upstream:{self.name}:"
            + hashlib.sha256(repr(key_parts).encode()).hexdigest()
        )
        try:
            hit = self.cache.get(key)
        except redis.RedisError:
            hit = None  # a cache outage must not fail the call
        if isinstance(hit, bytes):
            return hit
        if _cache_only.get():
            raise CacheMiss(self.name)
        value = fetch()
        try:
            self.cache.set(key, value, ex=self.cache_ttl_s)
        except redis.RedisError:
            logger.warning("upstream cache write failed for %s", self.name)
        return value
