"""JSON log lines with request ids and call ids, from the api into the worker and back."""

from __future__ import annotations

import json
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.observability.conftest import ObservedStack, poll
from tests.observability.test_metrics import new_key


def json_lines(text: str) -> list[dict[str, Any]]:
    lines = []
    for raw in text.splitlines():
        if raw.startswith("{"):
            lines.append(json.loads(raw))  # every line that looks like JSON is JSON
    return lines


async def test_a_call_id_is_in_the_api_line_and_in_the_worker_lines(
    observed: ObservedStack,
) -> None:
    _user_id, key = new_key(observed)
    request_id = "trace-me-42"
    headers = {"Authorization": f"Bearer {key}", "X-Request-ID": request_id}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with http, Client(streamable_http_client(observed.mcp_url, http_client=http)) as client:
        result = await client.call_tool("get_population", {"postal_code": "10001"})
    assert not result.is_error

    def api_line() -> dict[str, Any] | None:
        for line in json_lines(observed.server.log()):
            if line.get("event") == "tool_call" and line.get("request_id") == request_id:
                return line
        return None

    poll(lambda: api_line() is not None)
    line = api_line()
    assert line is not None
    assert (line["tool"], line["outcome"], line["level"]) == ("get_population", "ok", "info")
    call_id = line["call_id"]
    assert call_id.startswith("call_")
    # One line for the call: the MCP SDK's per-request INFO lines are not written.
    request_lines = [
        x for x in json_lines(observed.server.log()) if x.get("request_id") == request_id
    ]
    assert not [x for x in request_lines if x["logger"].startswith("mcp")], request_lines

    def worker_lines() -> list[dict[str, Any]]:
        return [x for x in json_lines(observed.worker.log()) if x.get("call_id") == call_id]

    poll(lambda: any(x.get("event") == "task_done" for x in worker_lines()))
    done = [x for x in worker_lines() if x.get("event") == "task_done"]
    assert len(done) == 1
    assert (done[0]["task"], done[0]["outcome"]) == ("tools.run", "success")
    assert done[0]["request_id"] == request_id  # carried in the task's headers
    # Celery's own INFO lines about the task (its arguments, its result) are not written
    assert not any("succeeded" in x["message"] for x in worker_lines())


async def test_the_mcp_sdk_writes_no_line_per_request(observed: ObservedStack) -> None:
    """A stateless request of a legacy-mode client made the SDK log "Terminating session:
    None" at INFO: as many lines as calls. Its warnings still show."""
    _user_id, key = new_key(observed)
    request_id = "sdk-quiet-7"
    headers = {"Authorization": f"Bearer {key}", "X-Request-ID": request_id}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    transport = streamable_http_client(observed.mcp_url, http_client=http)
    async with http, Client(transport, mode="legacy") as client:
        result = await client.call_tool("get_population", {"postal_code": "10001"})
    assert not result.is_error

    def lines() -> list[dict[str, Any]]:
        return [x for x in json_lines(observed.server.log()) if x.get("request_id") == request_id]

    poll(lambda: any(x.get("event") == "tool_call" for x in lines()))
    assert [x["logger"] for x in lines() if x["logger"].startswith("mcp")] == []


@pytest.mark.parametrize(
    ("sent", "echoed"),
    [
        ("abc-123_X.y:z", "abc-123_X.y:z"),
        ("x" * 129, None),
        ("has space", None),
        ("", None),
        (None, None),
    ],
)
def test_request_ids_are_echoed_when_sane(
    observed: ObservedStack, sent: str | None, echoed: str | None
) -> None:
    headers = {"X-Request-ID": sent} if sent is not None else {}
    response = httpx.get(f"{observed.server.url}/healthz", headers=headers, timeout=10)
    request_id = response.headers["x-request-id"]
    if echoed is not None:
        assert request_id == echoed
    else:
        assert request_id.startswith("req_")
        assert len(request_id) == 20
    poll(
        lambda: any(
            x.get("request_id") == request_id and x.get("logger") == "uvicorn.access"
            for x in json_lines(observed.server.log())
        )
    )


def test_errors_carry_a_request_id_too(observed: ObservedStack) -> None:
    response = httpx.get(f"{observed.server.url}/me", timeout=10)
    assert response.status_code == 401
    assert response.headers["x-request-id"].startswith("req_")
