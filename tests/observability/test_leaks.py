"""What the service must not give away (issue 21, item 6): credentials sent in a URL
(refused, and redacted from the access log), users' tool arguments and results in the
worker's INFO log, readiness details without the metrics token, library names in error
messages."""

from __future__ import annotations

import json
import secrets

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.observability.conftest import AUTH, ObservedStack, poll
from tests.observability.test_logs import json_lines
from tests.observability.test_metrics import new_key

# Words that name what the service is built with, never for a caller to see.
LIBRARY_NAMES = (
    "pydantic",
    "sqlalchemy",
    "sqlmodel",
    "starlette",
    "fastapi",
    "uvicorn",
    "httptools",
    "celery",
    "kombu",
    "redis",
    "psycopg",
    "traceback",
    "validation error for",
)


class TestCredentialsInUrl:
    @pytest.mark.parametrize(
        ("method", "path", "param"),
        [
            ("POST", "/mcp", "api_key"),
            ("GET", "/me", "key"),
            ("GET", "/healthz", "token"),
            ("GET", "/dashboard", "api_key"),
        ],
    )
    def test_a_key_in_the_query_is_refused_and_not_logged(
        self, observed: ObservedStack, method: str, path: str, param: str
    ) -> None:
        secret = f"svc_live_ak_abc123_{secrets.token_hex(16)}"
        request_id = f"leak-{secrets.token_hex(6)}"
        response = httpx.request(
            method,
            f"{observed.server.url}{path}?{param}={secret}",
            headers={"X-Request-ID": request_id},
            json={} if method == "POST" else None,
            timeout=10,
        )
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "INVALID_ARGUMENT"
        assert "Authorization header" in error["message"]

        def access_line() -> dict[str, object] | None:
            for line in json_lines(observed.server.log()):
                if line.get("request_id") == request_id and line["logger"] == "uvicorn.access":
                    return line
            return None

        poll(lambda: access_line() is not None)
        assert f"{param}=[redacted]" in str(access_line())
        assert secret not in observed.server.log()
        assert secret.rsplit("_", 1)[1] not in observed.server.log()

    def test_an_api_key_under_any_name_is_refused(self, observed: ObservedStack) -> None:
        secret = f"svc_live_ak_abc123_{secrets.token_hex(16)}"
        response = httpx.get(f"{observed.server.url}/healthz?q={secret}", timeout=10)
        assert response.status_code == 400

    def test_ordinary_query_strings_pass(self, observed: ObservedStack) -> None:
        response = httpx.get(f"{observed.server.url}/healthz?notice=saved", timeout=10)
        assert response.status_code == 200


async def test_worker_info_log_has_no_arguments_or_results(observed: ObservedStack) -> None:
    _user_id, key = new_key(observed)
    query = f"Springfield{secrets.token_hex(4)}"  # unique: findable if logged
    headers = {"Authorization": f"Bearer {key}"}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with http, Client(streamable_http_client(observed.mcp_url, http_client=http)) as client:
        population = await client.call_tool("get_population", {"postal_code": "59487"})
        await client.call_tool("geocode", {"query": query, "limit": 1})
    assert not population.is_error
    assert population.structured_content is not None
    result_text = json.dumps(population.structured_content)
    place = population.structured_content["placeName"]
    assert place

    def task_lines() -> list[dict[str, object]]:
        return [x for x in json_lines(observed.worker.log()) if x.get("event") == "task_done"]

    poll(lambda: len(task_lines()) >= 2)
    log = observed.worker.log()
    assert query not in log
    assert "59487" not in log
    assert result_text not in log
    assert f"'{place}'" not in log
    assert f'"{place}"' not in log
    assert "succeeded in" not in log  # Celery's line with the task's return value


class TestReadiness:
    def test_without_the_token_only_the_status(self, observed: ObservedStack) -> None:
        response = httpx.get(f"{observed.server.url}/readyz", timeout=10)
        assert response.status_code == 200
        assert response.json() == {"status": "ok"}

    def test_with_the_metrics_token_the_details(self, observed: ObservedStack) -> None:
        response = httpx.get(f"{observed.server.url}/readyz", headers=AUTH, timeout=10)
        assert response.status_code == 200
        assert response.json()["checks"] == {"redis": "ok", "database": "ok"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/auth/signup", b"{not json"),
        ("POST", "/auth/signup", b"[1, 2]"),
        ("POST", "/auth/signup", b'{"email": 5, "password": {"a": 1}}'),
        ("POST", "/auth/signin", b'{"email": "a@b.c"}'),
        ("POST", "/mcp", b"{not json"),
        ("POST", "/mcp", b'{"jsonrpc": "2.0", "id": 1, "method": 7}'),
        ("POST", "/mcp", b'{"jsonrpc": "1.0"}'),
        ("GET", "/api-keys/%00", b""),
    ],
)
def test_error_messages_name_no_library(
    observed: ObservedStack, method: str, path: str, body: bytes
) -> None:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer svc_live_ak_nosuchkey_" + "x" * 32,
    }
    response = httpx.request(
        method, f"{observed.server.url}{path}", content=body, headers=headers, timeout=10
    )
    assert response.status_code >= 400
    text = response.text.lower()
    for name in LIBRARY_NAMES:
        assert name not in text, f"{name!r} in {response.text!r}"
    assert "uvicorn" not in response.headers.get("server", "")
