"""GET /usage/calls a page at a time on the live server: cursors forward and back, the tool
filter, and the refusals of bad cursors (422, never a 500)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.kit.redis_client import sync_redis
from app.request_log import service as request_log
from tests.request_log.seed import calls, seed_calls
from tests.support.factories import sign_up
from tests.support.fixtures import Backend


def seed(user_id: str, count: int, *, start_ms: int, tool: str = "geocode") -> None:
    seed_calls(user_id, calls(count, start_ms=start_ms, tool=tool))


def call_ids(body: dict[str, Any]) -> list[str]:
    return [call["callId"] for call in body["calls"]]


@pytest.fixture
def account(http: httpx.Client, use_backend: Backend) -> Iterator[str]:
    """A signed-in account whose request log this process writes (the server's Redis
    prefix, through `use_backend`); deleted after."""
    user_id = str(sign_up(http)["userId"])
    yield user_id
    sync_redis().delete(request_log.log_key(user_id), request_log.last_used_key(user_id))


class TestPages:
    def test_next_and_previous_pages_cover_the_log_once(
        self, http: httpx.Client, account: str
    ) -> None:
        seed(account, 25, start_ms=int(time.time() * 1000) - 60_000)

        first = http.get("/usage/calls", params={"limit": 10}).json()
        second = http.get("/usage/calls", params={"limit": 10, "before": first["nextCursor"]})
        third = http.get(
            "/usage/calls", params={"limit": 10, "before": second.json()["nextCursor"]}
        ).json()

        assert first["matched"] == 25
        assert (first["offset"], first["prevCursor"]) == (0, None)
        assert second.status_code == 200
        assert second.json()["offset"] == 10
        assert (third["offset"], len(third["calls"]), third["nextCursor"]) == (20, 5, None)
        seen = call_ids(first) + call_ids(second.json()) + call_ids(third)
        assert seen == [f"call_geocode_{n}" for n in range(24, -1, -1)]
        back = http.get("/usage/calls", params={"limit": 10, "after": third["prevCursor"]})
        assert call_ids(back.json()) == call_ids(second.json())

    def test_the_tool_filter_pages_within_it(self, http: httpx.Client, account: str) -> None:
        now = int(time.time() * 1000)
        seed(account, 6, start_ms=now - 60_000, tool="geocode")
        seed(account, 4, start_ms=now - 30_000, tool="static_map")

        body = http.get("/usage/calls", params={"tool": "geocode", "limit": 4}).json()

        assert body["matched"] == 6
        assert {call["tool"] for call in body["calls"]} == {"geocode"}
        rest = http.get(
            "/usage/calls", params={"tool": "geocode", "limit": 4, "before": body["nextCursor"]}
        ).json()
        assert call_ids(rest) == ["call_geocode_1", "call_geocode_0"]

    @pytest.mark.parametrize(
        "params",
        [
            {"before": "not-a-cursor"},
            {"after": "1" * 16 + "-abcdefabcdef"},
            {"before": "1-abcdefabcdef", "after": "2-abcdefabcdef"},
            {"tool": "Geo Code"},
        ],
    )
    def test_bad_cursors_and_filters_are_422(
        self, http: httpx.Client, account: str, params: dict[str, str]
    ) -> None:
        response = http.get("/usage/calls", params=params)

        assert response.status_code == 422
        assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
