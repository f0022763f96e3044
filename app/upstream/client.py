"""HTTP client for upstream data providers: timeouts, narrow retries, a shared answer cache.

Retried: transport errors (connect/read failures, timeouts), 429 (honouring Retry-After up
to a cap) and 5xx. Never retried: other 4xx, which mean our request is wrong or the thing
does not exist; the provider decides what those mean. When retries run out the caller gets
`UpstreamUnavailable`, which costs the user no credit; tool tasks are not retried by
Celery (the caller has a deadline), so a longer outage is an error the agent can retry.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import redis
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from app.clock import utcnow
from app.errors import UpstreamUnavailable

logger = logging.getLogger(__name__)

USER_AGENT = "geosvc/0.1 (+https://github.com/geosvc; hosted geodata for agents)"


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


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, httpx.TransportError | _RetryableStatus)


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


class UpstreamClient:
    """One upstream service (e.g. "nominatim"): base URL, timeouts, retries, cache."""

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
    ) -> None:
        self.name = name
        self.policy = policy or RetryPolicy()
        self.cache = cache
        self.cache_ttl_s = cache_ttl_s
        self.cache_prefix = cache_prefix
        self._http = httpx.Client(
            base_url=base_url,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0)),
            headers={"User-Agent": USER_AGENT, **(headers or {})},
            follow_redirects=True,
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
    ) -> httpx.Response:
        retrying = Retrying(
            stop=stop_after_attempt(self.policy.attempts),
            wait=_wait_for(self.policy),
            retry=retry_if_exception(_retryable),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._send_once(method, path, params, data)
        except (httpx.TransportError, _RetryableStatus) as exc:
            logger.warning(
                "%s unavailable after %d attempts: %s", self.name, self.policy.attempts, exc
            )
            raise UpstreamUnavailable(
                f"The {self.name} data provider is unavailable; no credit was charged. "
                "Try again shortly."
            ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _send_once(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        data: Mapping[str, str] | None,
    ) -> httpx.Response:
        response = self._http.request(method, path, params=params, data=data)
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response)
        if response.status_code >= 400:
            raise UpstreamStatusError(response.status_code, response.text[:500])
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
        value = fetch()
        try:
            self.cache.set(key, value, ex=self.cache_ttl_s)
        except redis.RedisError:
            logger.warning("upstream cache write failed for %s", self.name)
        return value
