"""GET /v1/geocode and its batch say when a name is ambiguous, as the OpenAPI document
describes."""

from __future__ import annotations

from tests.mcp.conftest import Stack
from tests.v1.conftest import Client, openapi
from tests.v1.test_openapi import validate


class TestAmbiguousGeocode:
    def test_portland_lists_oregon_and_maine(self, v1_stack: Stack, client: Client) -> None:
        response = client.api.get("/v1/geocode", params={"query": "Portland"})

        assert response.status_code == 200, response.text
        body = response.json()
        assert body["ambiguous"] is True
        assert [(c["countryCode"], c["admin1"]) for c in body["candidates"]] == [
            ("US", "Oregon"),
            ("US", "Maine"),
        ]
        document = openapi(v1_stack.server.url)
        ok = document["paths"]["/v1/geocode"]["get"]["responses"]["200"]["content"]
        schema = ok["application/json"]["schema"]
        validate(body, schema, document)
        properties = document["components"]["schemas"]["GeocodeResult"]["properties"]
        assert {"ambiguous", "candidates"} <= set(properties)

    def test_the_batch_judges_each_query(self, client: Client) -> None:
        response = client.api.post(
            "/v1/geocode/batch",
            json={"items": [{"query": "San Jose"}, {"query": "10001"}]},
        )

        assert response.status_code == 200, response.text
        first, second = (item["result"] for item in response.json()["results"])
        assert first["ambiguous"] is True
        assert first["candidates"][1]["countryCode"] == "CR"
        assert (second["ambiguous"], second["candidates"]) == (False, [])
