"""/metrics after real tile fetches (issue 53): tiles served by where they came from
(drawn by the worker, then from the api's memory or Redis), a 304, an address budget's
refusal, and the worker's draw time. Deltas around the fetches, on the session's
observed stack (an api of two processes: a repeat may come from either's cache)."""

from __future__ import annotations

import httpx

from tests.observability.conftest import TILE_FETCHES_PER_IP, ObservedStack, poll
from tests.observability.test_metrics import delta, new_key
from tests.tiles.test_endpoints import fresh_address, get_from

SERVED = "geosvc_tiles_served_total"


def fetch(address: str, url: str, **headers: str) -> httpx.Response:
    return get_from(address, url, headers=headers)


def test_tiles_count_by_source_304s_refusals_and_draw_time(observed: ObservedStack) -> None:
    _user, key = new_key(observed)
    bearer = {"Authorization": f"Bearer {key}"}
    api_before, worker_before = observed.api_metrics(), observed.worker_metrics()
    # a tile of a metatile no other test draws: zoom 11 in the Bering Sea
    url = f"{observed.server.url}/v1/tiles/11/60/600.png"
    first = fetch(fresh_address(), url, **bearer)
    assert first.status_code == 200, first.text
    for _ in range(3):
        assert fetch(fresh_address(), url, **bearer).status_code == 200
    again = fetch(fresh_address(), url, **bearer, **{"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    refused_from = fresh_address()
    for _ in range(TILE_FETCHES_PER_IP):  # no key: 401s, each counted by the address
        assert fetch(refused_from, url).status_code == 401
    assert fetch(refused_from, url).status_code == 429

    api = observed.api_metrics()
    assert delta(api_before, api, SERVED, source="drawn") == 1
    cached = delta(api_before, api, SERVED, source="memory") + delta(
        api_before, api, SERVED, source="redis"
    )
    assert cached == 3
    assert delta(api_before, api, SERVED, source="not_modified") == 1
    refusals = "geosvc_tile_refusals_total"
    assert delta(api_before, api, refusals, budget="address") == 1
    assert delta(api_before, api, refusals, budget="account") == 0

    def drawn() -> bool:
        worker = observed.worker_metrics()
        return delta(worker_before, worker, "geosvc_tile_draw_seconds_count") >= 1

    poll(drawn)
    worker = observed.worker_metrics()
    assert delta(worker_before, worker, "geosvc_tile_draw_seconds_count") == 1
    assert delta(worker_before, worker, "geosvc_tile_draw_seconds_sum") > 0
