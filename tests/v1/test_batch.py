"""Batches: POST /v1/geocode/batch and /v1/reverse-geocode/batch, and the same batches
for agents (geocode with `queries`, reverse_geocode with `points`): answers one to one,
1 credit per item with data, the free cap item by item, one task for the batch."""

from __future__ import annotations

from tests.mcp.conftest import FREE_QUOTA, Stack, connect, structured
from tests.support.fixtures import ON_A_REDIS_CLUSTER_TOO
from tests.v1.conftest import Client, assert_documented, wait_for_rows


class TestHttpBatch:
    def test_answers_are_aligned_and_only_items_with_data_cost(
        self, v1_stack: Stack, client: Client
    ) -> None:
        items = [
            {"query": "Austin, TX", "limit": 1},
            {"query": "zzzzqqqq nowhere"},
            {"query": "Paris", "country": "FR", "limit": 2},
        ]
        ran_before = v1_stack.worker.tasks_run("tools.run_batch")
        single_before = v1_stack.worker.tasks_run("tools.run")

        response = client.api.post("/v1/geocode/batch", json={"items": items})

        assert response.status_code == 200, response.text
        assert_documented(response)
        body = response.json()
        assert [item["status"] for item in body["results"]] == [200, 404, 200]
        assert body["results"][0]["result"]["results"][0]["name"] == "Austin"
        assert body["results"][1]["error"]["code"] == "NOT_FOUND"
        assert body["results"][2]["result"]["results"][0]["countryCode"] == "FR"
        assert body["credits"] == 2
        assert response.headers["credits-remaining"] == str(FREE_QUOTA - 2)
        assert "ratelimit" in response.headers
        assert v1_stack.worker.tasks_run("tools.run_batch") == ran_before + 1  # one task
        assert v1_stack.worker.tasks_run("tools.run") == single_before
        assert wait_for_rows(v1_stack, client.user_id, 2) == [("geocode", 1), ("geocode", 1)]
        assert client.usage()["used"] == 2

    def test_reverse_geocode_batch(self, v1_stack: Stack, client: Client) -> None:
        points = [{"lat": 48.8566, "lon": 2.3522}, {"lat": 0.0, "lon": -140.0}]

        response = client.api.post("/v1/reverse-geocode/batch", json={"items": points})

        assert response.status_code == 200
        results = response.json()["results"]
        assert results[0]["result"]["countryCode"] == "FR"
        assert (results[1]["status"], results[1]["error"]["code"]) == (404, "NOT_FOUND")
        assert wait_for_rows(v1_stack, client.user_id, 1) == [("reverse_geocode", 1)]

    @ON_A_REDIS_CLUSTER_TOO
    def test_a_batch_that_crosses_the_free_cap_answers_what_fits(
        self, v1_stack: Stack, client: Client
    ) -> None:
        assert client.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200
        items = [{"query": "Denver"}] * (FREE_QUOTA + 3)

        response = client.api.post("/v1/geocode/batch", json={"items": items})

        statuses = [item["status"] for item in response.json()["results"]]
        assert statuses == [200] * (FREE_QUOTA - 1) + [402] * 4
        refused = response.json()["results"][-1]["error"]
        assert (refused["code"], refused["quota"]) == ("QUOTA_EXCEEDED", FREE_QUOTA)
        assert response.json()["credits"] == FREE_QUOTA - 1
        assert response.headers["credits-remaining"] == "0"
        assert client.usage()["used"] == FREE_QUOTA
        assert len(wait_for_rows(v1_stack, client.user_id, FREE_QUOTA)) == FREE_QUOTA

    def test_a_malformed_list_is_refused_whole_and_free(self, client: Client) -> None:
        too_many = client.api.post("/v1/geocode/batch", json={"items": [{"query": "x"}] * 101})
        empty = client.api.post("/v1/geocode/batch", json={"items": []})
        not_json = client.api.post(
            "/v1/geocode/batch", content=b"{items", headers={"Content-Type": "application/json"}
        )
        not_an_object = client.api.post("/v1/reverse-geocode/batch", json={"items": [[1, 2]]})

        for response in (too_many, empty, not_json, not_an_object):
            assert response.status_code == 400, response.text
            assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
            assert_documented(response)
        assert "1 to 100 items, not 101" in too_many.json()["error"]["message"]
        assert "items[0]: must be a JSON object" in not_an_object.json()["error"]["message"]
        assert client.usage()["used"] == 0

    def test_an_invalid_item_is_answered_in_its_place_and_free(
        self, v1_stack: Stack, client: Client
    ) -> None:
        items = [{"query": "Paris"}, {"query": "x", "limit": 50}, {"query": "Rome", "zoom": 3}]

        response = client.api.post("/v1/geocode/batch", json={"items": items})

        assert response.status_code == 200, response.text
        assert_documented(response)
        results = response.json()["results"]
        assert [item["status"] for item in results] == [200, 400, 400]
        assert results[1]["error"]["code"] == "INVALID_ARGUMENT"
        assert results[1]["error"]["message"].startswith("limit: must be at most 10")
        assert results[2]["error"]["message"].startswith("zoom: is not a known argument")
        assert response.json()["credits"] == 1
        assert wait_for_rows(v1_stack, client.user_id, 1) == [("geocode", 1)]
        assert client.usage()["used"] == 1


class TestMcpBatch:
    async def test_geocode_takes_queries_and_reverse_geocode_points(
        self, v1_stack: Stack, client: Client
    ) -> None:
        async with connect(v1_stack.mcp_url, client.api_key) as mcp:
            tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
            places = await mcp.call_tool(
                "geocode", {"queries": ["Austin, TX", "zzzzqqqq nowhere"], "limit": 1}
            )
            points = await mcp.call_tool(
                "reverse_geocode", {"points": [{"lat": 48.85, "lon": 2.35}]}
            )
            both = await mcp.call_tool("geocode", {"query": "Paris", "queries": ["Rome"]})

        assert "queries" in tools["geocode"].input_schema["properties"]
        assert "points" in tools["reverse_geocode"].input_schema["properties"]
        assert "Batch: `queries` (" in (tools["geocode"].description or "")
        answer = structured(places)
        assert not places.is_error
        assert [item["status"] for item in answer["results"]] == [200, 404]
        assert answer["results"][0]["result"]["results"][0]["name"] == "Austin"
        assert answer["credits"] == 1
        assert structured(points)["results"][0]["result"]["countryCode"] == "FR"
        assert both.is_error
        assert "query: not with `queries`" in structured(both)["error"]["message"]
        rows = wait_for_rows(v1_stack, client.user_id, 2)
        assert rows == [("geocode", 1), ("reverse_geocode", 1)]  # as the HTTP batch's rows
