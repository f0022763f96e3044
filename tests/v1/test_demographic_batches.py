"""Batches of the demographic tools (issue 40, item 4): POST /v1/population/batch,
/v1/average-income/batch, /v1/demographics/batch, and over MCP the same tools given
`postal_codes` or `areas`: answers one to one, an invalid or unknown item answered in its
place, 1 credit per item with data, the free cap item by item."""

from __future__ import annotations

from typing import Any

from tests.mcp.conftest import FREE_QUOTA, Stack, connect, structured, usage_meta
from tests.v1.conftest import Client, assert_documented, wait_for_rows


def statuses(body: dict[str, Any]) -> list[int]:
    return [item["status"] for item in body["results"]]


def codes(body: dict[str, Any]) -> list[str | None]:
    return [item.get("error", {}).get("code") for item in body["results"]]


class TestHttp:
    def test_population_items_are_answered_one_to_one(
        self, v1_stack: Stack, client: Client
    ) -> None:
        items = [
            {"postal_code": "78701"},
            {"postal_code": "00000"},  # no such ZIP
            {"postal_code": "2139"},  # a lost leading zero: invalid
            {"area": "Travis County, Texas"},
            {"area": "Qqqzzx Land"},  # no such area
            {"postal_code": "78701", "area": "Texas"},  # both: invalid
        ]

        response = client.api.post("/v1/population/batch", json={"items": items})

        assert response.status_code == 200, response.text
        assert_documented(response)
        body = response.json()
        assert statuses(body) == [200, 404, 400, 200, 404, 400]
        assert codes(body)[1:3] == ["NOT_FOUND", "INVALID_ARGUMENT"]
        assert 'did you mean "02139"' in body["results"][2]["error"]["message"]
        zip_answer, county = body["results"][0]["result"], body["results"][3]["result"]
        assert (zip_answer["postalCode"], zip_answer["placeName"]) == ("78701", "Austin")
        assert (county["level"], county["areaId"]) == ("county", "48453")
        assert "give exactly one of" in body["results"][5]["error"]["message"]
        assert body["credits"] == 2
        assert response.headers["credits-charged"] == "2"
        assert response.headers["credits-remaining"] == str(FREE_QUOTA - 2)
        assert wait_for_rows(v1_stack, client.user_id, 2) == [("get_population", 1)] * 2
        assert client.usage()["used"] == 2

    def test_income_and_demographics(self, v1_stack: Stack, client: Client) -> None:
        income = client.api.post(
            "/v1/average-income/batch",
            json={"items": [{"postal_code": "10001"}, {"area": "Vietnam"}]},
        )
        profiles = client.api.post(
            "/v1/demographics/batch",
            json={
                "items": [
                    {"postal_code": "94103", "topics": ["age"]},
                    {"postal_code": "94103", "topics": ["income"]},  # no such topic
                    {"area": "Texas"},  # ZIP codes only
                ]
            },
        )

        assert income.status_code == profiles.status_code == 200
        assert statuses(income.json()) == [200, 422]
        assert income.json()["results"][0]["result"]["measure"] == "median_household_income"
        assert codes(income.json())[1] == "UNSUPPORTED"
        assert statuses(profiles.json()) == [200, 400, 422]
        measures = profiles.json()["results"][0]["result"]["measures"]
        assert {measure["topic"] for measure in measures} == {"age"}
        assert codes(profiles.json())[1:] == ["INVALID_ARGUMENT", "UNSUPPORTED"]
        assert (income.json()["credits"], profiles.json()["credits"]) == (1, 1)
        rows = wait_for_rows(v1_stack, client.user_id, 2)
        assert rows == [("get_average_income", 1), ("get_demographics", 1)]
        assert client.usage()["used"] == 2

    def test_a_batch_that_crosses_the_free_cap_answers_what_fits(
        self, v1_stack: Stack, client: Client
    ) -> None:
        first = client.api.get("/v1/population", params={"postal_code": "78701"})
        assert first.status_code == 200
        items = [{"postal_code": "78701"}, {"postal_code": "2139"}] + [{"postal_code": "10001"}] * (
            FREE_QUOTA + 1
        )

        response = client.api.post("/v1/population/batch", json={"items": items})

        body = response.json()
        # the invalid item takes no credit: FREE_QUOTA - 1 of the others fit
        assert statuses(body) == [200, 400] + [200] * (FREE_QUOTA - 2) + [402] * 3
        refused = body["results"][-1]["error"]
        assert (refused["code"], refused["quota"]) == ("QUOTA_EXCEEDED", FREE_QUOTA)
        assert body["credits"] == FREE_QUOTA - 1
        assert response.headers["credits-remaining"] == "0"
        assert client.usage()["used"] == FREE_QUOTA
        assert len(wait_for_rows(v1_stack, client.user_id, FREE_QUOTA)) == FREE_QUOTA

    def test_a_malformed_list_is_refused_whole_and_free(self, client: Client) -> None:
        too_many = client.api.post(
            "/v1/demographics/batch", json={"items": [{"postal_code": "94103"}] * 101}
        )
        empty = client.api.post("/v1/population/batch", json={"items": []})
        not_objects = client.api.post("/v1/average-income/batch", json={"items": ["94103"]})

        for response in (too_many, empty, not_objects):
            assert response.status_code == 400, response.text
            assert response.json()["error"]["code"] == "INVALID_ARGUMENT"
            assert_documented(response)
        assert "1 to 100 items, not 101" in too_many.json()["error"]["message"]
        assert "items[0]: must be a JSON object" in not_objects.json()["error"]["message"]
        assert client.usage()["used"] == 0


class TestMcp:
    async def test_the_tools_take_lists(self, v1_stack: Stack, client: Client) -> None:
        async with connect(v1_stack.mcp_url, client.api_key) as mcp:
            tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
            population = await mcp.call_tool(
                "get_population", {"postal_codes": ["78701", "78702", "00000", "abc"]}
            )
            income = await mcp.call_tool("get_average_income", {"areas": ["Texas", "Zzqqx"]})
            profiles = await mcp.call_tool(
                "get_demographics", {"postal_codes": [94103, "10001"], "topics": ["housing"]}
            )

        for name, lists in [
            ("get_population", {"postal_codes", "areas"}),
            ("get_average_income", {"postal_codes", "areas"}),
            ("get_demographics", {"postal_codes"}),
        ]:
            properties = tools[name].input_schema["properties"]
            assert lists <= set(properties), name
            assert all(properties[n]["maxItems"] == 10_000 for n in lists)  # as a task
            assert "(`results[i]`: item i)" in (tools[name].description or "")
        answer = structured(population)
        assert not population.is_error
        assert statuses(answer) == [200, 200, 404, 400]
        found = [item["result"]["population"] for item in answer["results"][:2]]
        summary = population.content[0].text.split("\n")[0]
        assert summary.startswith("4 items: 2 answered (2 credits), 1 NOT_FOUND, 1 INVALID")
        assert f"total population {sum(found):,} (2 distinct)" in summary
        assert (usage_meta(population)["charged"], usage_meta(population)["used"]) == (2, 2)
        assert statuses(structured(income)) == [200, 404]  # a state's: the upstream ACS
        assert structured(income)["results"][0]["result"]["level"] == "state"
        assert (structured(income)["credits"], usage_meta(income)["charged"]) == (1, 1)
        profile = structured(profiles)
        assert statuses(profile) == [200, 200]
        assert profile["results"][0]["result"]["postalCode"] == "94103"
        assert {m["topic"] for m in profile["results"][1]["result"]["measures"]} == {"housing"}
        assert usage_meta(profiles)["charged"] == 2
        rows = wait_for_rows(v1_stack, client.user_id, 5)
        assert rows == [
            ("get_average_income", 1),
            *[("get_demographics", 1)] * 2,
            *[("get_population", 1)] * 2,
        ]

    async def test_calls_that_are_no_batch_are_refused_whole_and_free(
        self, v1_stack: Stack, client: Client
    ) -> None:
        async with connect(v1_stack.mcp_url, client.api_key) as mcp:
            refused = {
                "both forms": await mcp.call_tool(
                    "get_population", {"postal_code": "78701", "postal_codes": ["78702"]}
                ),
                "two lists": await mcp.call_tool(
                    "get_population", {"postal_codes": ["78701"], "areas": ["Texas"]}
                ),
                "too many": await mcp.call_tool(
                    "get_average_income", {"postal_codes": ["78701"] * 101}
                ),
                "empty": await mcp.call_tool("get_demographics", {"postal_codes": []}),
                "not a list": await mcp.call_tool("get_population", {"areas": "Texas"}),
                "unknown": await mcp.call_tool(
                    "get_population", {"postal_codes": ["78701"], "limit": 3}
                ),
                "areas of demographics": await mcp.call_tool(
                    "get_demographics", {"areas": ["Texas"]}
                ),
            }

        messages = {}
        for case, result in refused.items():
            assert result.is_error, case
            error = structured(result)["error"]
            assert error["code"] == "INVALID_ARGUMENT", case
            messages[case] = error["message"]
        assert messages["both forms"].startswith("postal_code: not with `postal_codes`")
        assert messages["two lists"] == "postal_codes, areas: give one list per call"
        assert messages["too many"] == "postal_codes: must hold 1 to 100 items, not 101"
        assert messages["empty"] == "postal_codes: must hold 1 to 100 items, not 0"
        assert messages["not a list"] == "areas: must be a list of 1 to 100 items"
        assert messages["unknown"].startswith("limit: is not a known argument")
        assert messages["areas of demographics"].startswith("areas: is not a known argument")
        assert client.usage()["used"] == 0
