"""/metrics after real tile fetches (issue 53): tiles served by where they came from
(drawn by the worker, then from the api's memory or Redis), a 304, an address budget's
refusal, and the worker's draw time. Deltas around the fetches, on the session's
observed stack (an api of two processes: a repeat may come from either's cache).

Each address's fetches share one client and its kept-alive connection: a new client a
request (its TLS context built each time, though the URL is plain HTTP) took ~300 ms of
a loaded machine, and the refusal alone needs TILE_FETCHES_PER_IP + 1 of them."""

from __future__ import annotations

import httpx

from tests.observability.conftest import TILE_FETCHES_PER_IP, ObservedStack, poll
from tests.observability.test_metrics import delta, new_key
from tests.tiles.test_endpoints import fresh_address

SERVED = "geosvc_tiles_served_total"


def client_from(address: str) -> httpx.Client:
    """A client whose connections leave from `address` (one of 127.0.0.0/8)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=30)


def fetch(address: str, url: str, **headers: str) -> httpx.Response:
    with client_from(address) as http:
        return http.get(url, headers=headers)


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
    with client_from(fresh_address()) as refused_from:
        for _ in range(TILE_FETCHES_PER_IP):  # no key: 401s, each counted by the address
            assert refused_from.get(url).status_code == 401
        refused = refused_from.get(url)
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["retry-after"]) > 0

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
