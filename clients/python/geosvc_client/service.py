"""The hand-written layer over the generated client (geosvc_client/generated/).

`GeoService.call(operation, **arguments)` runs any generated operation's `sync_detailed`,
retries what the service marks `retryable` (honouring `Retry-After`, within a number of
attempts and a total time), and answers an `Answer`: the typed result and the credits the
call cost (the `Credits-*` headers). Any other error raises `ServiceError` with the
envelope's code and message. `run_job` submits a bulk job, waits for it and reads its rows;
`call_batches` sends a list of any length as batches of 100.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from geosvc_client._version import __version__
from geosvc_client.generated.api.jobs import get_job, submit_job
from geosvc_client.generated.client import AuthenticatedClient
from geosvc_client.generated.models.error import Error
from geosvc_client.generated.models.job import Job
from geosvc_client.generated.models.job_submission import JobSubmission
from geosvc_client.generated.types import Response

T = TypeVar("T")
BATCH_LIMIT = 100  # items per batch call, as /v1 allows
USER_AGENT = f"geosvc-client-python/{__version__}"


class ServiceError(Exception):
    """An error answer in the service's envelope: `code`, `message` say what to do."""

    def __init__(self, status: int, envelope: dict[str, Any]) -> None:
        self.status = status
        self.code: str = envelope.get("code", "INTERNAL")
        self.message: str = envelope.get("message", "")
        self.retryable: bool = bool(envelope.get("retryable", False))
        self.retry_after_s: float | None = envelope.get("retryAfterSeconds")
        self.details = envelope
        super().__init__(f"{status} {self.code}: {self.message}")


@dataclass(frozen=True)
class Credits:
    """What a call cost and where the month stands (None: the answer did not say)."""

    charged: int | None
    used: int | None
    remaining: int | None
    quota: int | None
    state: str | None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> Credits:
        def number(name: str) -> int | None:
            value = headers.get(name)
            return int(value) if value is not None and value.lstrip("-").isdigit() else None

        return cls(
            charged=number("Credits-Charged"),
            used=number("Credits-Used"),
            remaining=number("Credits-Remaining"),
            quota=number("Credits-Quota"),
            state=headers.get("Credits-State"),
        )


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A tool's answer (the generated model) and its cost."""

    data: T
    credits: Credits
    request_id: str | None
    attempts: int = 1


@dataclass
class GeoService:
    """A client of the HTTP data API with one API key (test keys: `svc_test_ak_...`)."""

    api_key: str
    base_url: str = "http://127.0.0.1:8000"
    max_attempts: int = 4  # tries of a retryable refusal, the first included
    max_wait_s: float = 30.0  # longest total wait between tries
    timeout_s: float = 30.0  # per request
    sleep: Callable[[float], None] = time.sleep
    client: AuthenticatedClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = AuthenticatedClient(
            base_url=self.base_url.rstrip("/"),
            token=self.api_key,
            timeout=httpx.Timeout(self.timeout_s),
            headers={"User-Agent": USER_AGENT},
            raise_on_unexpected_status=False,
        )

    def call(self, operation: Any, /, *args: Any, **arguments: Any) -> Answer[Any]:
        """Run a generated operation module (e.g. `geosvc_client.api.tools.geocode`)."""
        return self._retrying(
            lambda: operation.sync_detailed(*args, client=self.client, **arguments)
        )

    def call_batches(
        self, operation: Any, body: Callable[[list[Any]], Any], items: Sequence[Any]
    ) -> Iterator[Answer[Any]]:
        """A batch operation over any number of items, BATCH_LIMIT at a time."""
        for start in range(0, len(items), BATCH_LIMIT):
            yield self.call(operation, body=body(list(items[start : start + BATCH_LIMIT])))

    def submit_job(self, tool: str, items: list[dict[str, Any]]) -> Job:
        submission = JobSubmission.from_dict({"tool": tool, "items": items})
        job: Job = self.call(submit_job, body=submission).data
        return job

    def wait_for_job(self, job_id: str, *, poll_s: float = 1.0, timeout_s: float = 3600.0) -> Job:
        """Poll the job until it is no longer working (raises TimeoutError after timeout_s)."""
        deadline = time.monotonic() + timeout_s
        while True:
            job: Job = self.call(get_job, job_id).data
            if job.status != "working":
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still working after {timeout_s} s")
            self.sleep(poll_s)

    def job_rows(self, job_id: str) -> list[dict[str, Any]]:
        """A finished job's rows in input order, each with its answer or its error."""
        response = self._retrying_raw(
            lambda: self.client.get_httpx_client().get(
                f"/v1/jobs/{job_id}/results", headers={"Accept": "application/x-ndjson"}
            )
        )
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]

    def run_job(
        self, tool: str, items: list[dict[str, Any]], **wait: float
    ) -> tuple[Job, list[dict[str, Any]]]:
        """Submit a job, wait for it, read its rows."""
        job = self.wait_for_job(self.submit_job(tool, items).id, **wait)
        return job, self.job_rows(job.id)

    def _retrying(self, send: Callable[[], Response[Any]]) -> Answer[Any]:
        attempts, waited = 0, 0.0
        while True:
            attempts += 1
            response = self._sent(send)
            if response.status_code < 400 and not isinstance(response.parsed, Error):
                headers = response.headers
                return Answer(
                    data=response.parsed,
                    credits=Credits.from_headers(headers),
                    request_id=headers.get("X-Request-ID"),
                    attempts=attempts,
                )
            error = _service_error(response.status_code, response.content, response.headers)
            waited = self._wait_or_raise(error, attempts, waited)

    def _retrying_raw(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        attempts, waited = 0, 0.0
        while True:
            attempts += 1
            response = self._sent(send)
            if response.status_code < 400:
                return response
            error = _service_error(response.status_code, response.content, response.headers)
            waited = self._wait_or_raise(error, attempts, waited)

    def _sent(self, send: Callable[[], Any]) -> Any:
        try:
            return send()
        except httpx.ConnectError as exc:  # nothing reached the service: safe to say so
            raise ServiceError(
                503, {"code": "UNAVAILABLE", "message": str(exc), "retryable": True}
            ) from exc

    def _wait_or_raise(self, error: ServiceError, attempts: int, waited: float) -> float:
        pause = error.retry_after_s if error.retry_after_s is not None else 2.0 ** (attempts - 1)
        if not error.retryable or attempts >= self.max_attempts or waited + pause > self.max_wait_s:
            raise error
        self.sleep(pause)
        return waited + pause


def _service_error(status: int, content: bytes, headers: Mapping[str, str]) -> ServiceError:
    try:
        envelope = json.loads(content)["error"]
    except (ValueError, KeyError, TypeError):
        envelope = {"code": "INTERNAL", "message": content[:200].decode("utf-8", "replace")}
    if envelope.get("retryAfterSeconds") is None and headers.get("Retry-After", "").isdigit():
        envelope["retryAfterSeconds"] = float(headers["Retry-After"])
    return ServiceError(status, envelope)
