"""Every tool over /v1: the answers, the ledger rows and the headers of /mcp's calls,
the error statuses, the free cap. A real server and worker (`v1_stack`)."""

from __future__ import annotations

import io
import json
import math
import time
from typing import Any

import httpx
import pytest
from PIL import Image
from sqlalchemy import create_engine, text

from app.kit.clock import iso_ms, period_end, period_of, period_start, utcnow
from app.v1.headers import CREDIT_HEADERS
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import DEADLINE_S, FREE_QUOTA, Stack, connect, structured
from tests.support.fixtures import ON_A_REDIS_CLUSTER_TOO
from tests.v1.conftest import Client, assert_documented, wait_for_rows

# (path, query parameters, tool, the same call's MCP arguments)
CALLS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("/v1/population", {"postal_code": "10001"}, "get_population", {"postal_code": "10001"}),
    (
        "/v1/average-income",
        {"postal_code": "94103"},
        "get_average_income",
        {"postal_code": "94103"},
    ),
    (
        "/v1/demographics",
        {"postal_code": "94103", "topics": "age,housing"},
        "get_demographics",
        {"postal_code": "94103", "topics": ["age", "housing"]},
    ),
    (
        "/v1/geocode",
        {"query": "Austin, TX", "limit": 1},
        "geocode",
        {"query": "Austin, TX", "limit": 1},
    ),
    (
        "/v1/reverse-geocode",
        {"lat": 48.8566, "lon": 2.3522},
        "reverse_geocode",
        {"lat": 48.8566, "lon": 2.3522},
    ),
    (
        "/v1/nearby",
        {"lat": 30.2672, "lon": -97.7431, "radius_m": 50000, "category": "airport"},
        "search_nearby",
        {"lat": 30.2672, "lon": -97.7431, "radius_m": 50000, "category": "airport"},
    ),
    (
        "/v1/static-map",
        {
            "markers": "30.27,-97.74,red,HQ",
            "path": "30.27,-97.74|30.5,-97.6| 30.2 , -97.9",
            "path_color": "#ff00ff",
            "path_width": "4",
            "width": 320,
            "height": 200,
        },
        "static_map",
        {
            "markers": [{"lat": 30.27, "lon": -97.74, "color": "red", "label": "HQ"}],
            "path": [
                {"lat": 30.27, "lon": -97.74},
                {"lat": 30.5, "lon": -97.6},
                {"lat": 30.2, "lon": -97.9},
            ],
            "path_color": "#ff00ff",
            "path_width": 4,
            "width": 320,
            "height": 200,
        },
    ),
]
JSON = {"Accept": "application/json"}


class TestSameAsMcp:
    async def test_every_tool_answers_and_charges_as_its_mcp_call(
        self, v1_stack: Stack, client: Client, other: Client
    ) -> None:
        agent = other  # the same calls over MCP, on another account
        answers = {}
        for path, query, tool, _ in CALLS:
            response = client.api.get(path, params=query, headers=JSON)
            assert response.status_code == 200, response.text
            assert_documented(response)
            answers[tool] = response.json()
        async with connect(v1_stack.mcp_url, agent.api_key) as mcp:
            for _, _, tool, arguments in CALLS:
                result = await mcp.call_tool(tool, arguments)
                assert not result.is_error, result.content
                expected = structured(result)
                got = dict(answers[tool])
                if tool == "static_map":
                    assert got.pop("pngBase64") == result.content[1].data  # the same image
                assert got == expected, tool

        rows = wait_for_rows(v1_stack, client.user_id, len(CALLS))
        assert rows == wait_for_rows(v1_stack, agent.user_id, len(CALLS))
        assert rows == sorted((tool, 1) for _, _, tool, _ in CALLS)
        assert client.usage()["used"] == len(CALLS)

    def test_static_map_is_a_png_unless_json_is_asked_for(self, client: Client) -> None:
        query = {"center": "40.7,-74.0", "zoom": 9, "width": 320, "height": 200}

        image = client.api.get("/v1/static-map", params=query)
        described = client.api.get(
            "/v1/static-map", params=query, headers={"Accept": "image/png;q=0.5, application/json"}
        )

        assert image.status_code == 200
        assert image.headers["content-type"] == "image/png"
        assert image.headers["vary"] == "Accept"
        assert Image.open(io.BytesIO(image.content)).size == (320, 200)
        assert described.headers["content-type"] == "application/json"
        assert (described.json()["zoom"], described.json()["width"]) == (9, 320)
        assert client.usage()["used"] == 2

    def test_static_map_json_names_the_markers_outside_the_view(self, client: Client) -> None:
        query = [
            ("center", "50,20"),
            ("zoom", "4"),
            ("markers", "55.75,37.62,red,Moscow"),
            ("markers", "-33.92,18.42"),
        ]

        answer = client.api.get(
            "/v1/static-map", params=query, headers={"Accept": "application/json"}
        )

        assert answer.status_code == 200, answer.text
        assert answer.json()["markers"] == 1
        assert answer.json()["warnings"] == [
            "1 of 2 markers are outside the map's view and not drawn: markers[1] (-33.92, "
            "18.42); leave out center and zoom to fit the map to every marker, or lower the zoom"
        ]
        png = client.api.get("/v1/static-map", params=query)  # the image alone says it too
        assert png.headers["content-type"] == "image/png"
        assert json.loads(png.headers["map-warnings"]) == answer.json()["warnings"]
        plain = client.api.get("/v1/static-map", params=[("center", "50,20"), ("zoom", "4")])
        assert "map-warnings" not in plain.headers


class TestHeaders:
    def test_a_data_answer_says_its_limits_credits_and_request_id(
        self, v1_stack: Stack, client: Client
    ) -> None:
        response = client.api.get(
            "/v1/population", params={"postal_code": "10001"}, headers={"X-Request-ID": "trace-42"}
        )

        assert response.status_code == 200
        env = v1_stack.server.env
        burst, rate = int(env["GEOSVC_FREE_BURST"]), float(env["GEOSVC_FREE_RATE_PER_S"])
        window = max(1, math.ceil(burst / rate))
        period = period_of(utcnow())
        month = int((period_end(period) - period_start(period)).total_seconds())
        seconds = int((period_end(period) - utcnow()).total_seconds())
        assert response.headers["ratelimit-policy"] == (
            f'"key";q={burst};w={window}, "account";q={2 * burst};w={window}, '
            f'"credits";q={FREE_QUOTA};w={month}'
        )
        key, account, credits = response.headers["ratelimit"].split(", ")
        assert key.startswith(f'"key";r={burst - 1};t=')
        assert account.startswith(f'"account";r={2 * burst - 1};t=')
        name, remaining, reset = credits.split(";")
        assert (name, remaining) == ('"credits"', f"r={FREE_QUOTA - 1}")
        assert abs(int(reset.removeprefix("t=")) - seconds) <= 5
        assert response.headers["credits-remaining"] == str(FREE_QUOTA - 1)
        assert response.headers["x-request-id"] == "trace-42"

    def test_deterministic_answers_are_cacheable_with_an_etag(self, client: Client) -> None:
        first = client.api.get("/v1/geocode", params={"query": "Denver"})
        again = client.api.get(
            "/v1/geocode",
            params={"query": "Denver"},
            headers={"If-None-Match": first.headers["etag"]},
        )
        other = client.api.get("/v1/geocode", params={"query": "Boston"})
        nearby = client.api.get(
            "/v1/nearby",
            params={"lat": 30.27, "lon": -97.74, "radius_m": 50000, "category": "city"},
        )

        assert first.headers["cache-control"] == "private, max-age=86400"
        assert first.headers["etag"].startswith('"')
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == first.headers["etag"]
        assert_documented(again)
        assert other.headers["etag"] != first.headers["etag"]
        assert nearby.headers["cache-control"] == "no-store"
        assert "etag" not in nearby.headers


class TestAreas:
    def test_population_and_income_of_an_area(self, client: Client) -> None:
        texas = client.api.get("/v1/population", params={"area": "TX"})
        deadline = time.monotonic() + 60  # a worker's first upstream area call: see test_areas
        county = client.api.get("/v1/average-income", params={"area": "48453"})
        while county.status_code == 504 and time.monotonic() < deadline:
            county = client.api.get("/v1/average-income", params={"area": "48453"})
        abroad = client.api.get("/v1/average-income", params={"area": "Vietnam"})

        assert texas.status_code == 200, texas.text
        assert_documented(texas)
        assert (texas.json()["level"], texas.json()["areaId"]) == ("state", "US-TX")
        assert texas.json()["year"] == 2019
        assert county.status_code == 200, county.text
        assert (county.json()["name"], county.json()["marginOfError"]) == (
            "Travis County, Texas",
            1_058,
        )
        assert abroad.status_code == 422, abroad.text
        assert abroad.json()["error"]["code"] == "UNSUPPORTED"


class TestErrors:
    @pytest.mark.parametrize(
        ("path", "query", "says"),
        [
            ("/v1/population", {"postal_code": "2139"}, 'did you mean "02139"'),
            ("/v1/population", {}, "exactly one of postal_code"),
            ("/v1/population", {"postal_code": "78701", "area": "Texas"}, "exactly one"),
            ("/v1/geocode", {"query": "Paris", "lang": "fr"}, "lang: is not a known parameter"),
            ("/v1/geocode", {"query": "Paris", "limit": "x"}, "limit"),
            ("/v1/reverse-geocode", {"lat": "91", "lon": "0"}, "lat"),
            ("/v1/reverse-geocode", {"lat": "nan", "lon": "0"}, "lat: must be a number"),
            ("/v1/reverse-geocode", {"lat": "4_8.8", "lon": "0"}, "lat: must be a number"),
            ("/v1/static-map", {"center": "40.7"}, "center: must be LAT,LON"),
            ("/v1/static-map", {"markers": "north,south"}, "markers: each must be"),
            ("/v1/static-map", {"path": "40.7,-74.0|40.8"}, "path: must be LAT,LON|LAT,LON"),
            ("/v1/static-map", {"path": "40.7,-74.0"}, "at least 2 points"),
            # longer than the documented maxLength but inside the URL limit: ours, not a 414
            ("/v1/static-map", {"path": "1" * 6001}, "path: at most 6,000 characters"),
            ("/v1/static-map", {"path": "40.7,-74|40.8,-74", "path_width": "13"}, "path_width"),
            ("/v1/static-map", {"path": "40.7,-74|40.8,-74", "path_color": "teal"}, "path_color"),
        ],
    )
    def test_bad_input_is_400_and_free(
        self, client: Client, path: str, query: dict[str, str], says: str
    ) -> None:
        response = client.api.get(path, params=query)

        assert response.status_code == 400, response.text
        assert_documented(response)
        error = response.json()["error"]
        assert error["code"] == "INVALID_ARGUMENT"
        assert says in error["message"]
        assert response.headers["cache-control"] == "no-store"
        assert "ratelimit-policy" in response.headers
        assert client.usage()["used"] == 0

    def test_a_repeated_parameter_is_400(self, client: Client) -> None:
        response = client.api.get("/v1/geocode?query=Paris&query=Rome")
        assert response.status_code == 400
        assert "query: give it once" in response.json()["error"]["message"]

    @pytest.mark.parametrize(
        "authorization",
        [
            None,
            "Basic dXNlcjpwYXNz",
            "Bearer not-a-key",
            "Bearer svc_live_ak_unknownkey123_" + "A" * 40,
        ],
    )
    def test_missing_malformed_and_unknown_keys_are_401_with_a_bearer_challenge(
        self, v1_stack: Stack, authorization: str | None
    ) -> None:
        headers = {"Authorization": authorization} if authorization else {}
        response = httpx.get(
            f"{v1_stack.server.url}/v1/geocode", params={"query": "Paris"}, headers=headers
        )

        assert response.status_code == 401
        assert_documented(response)
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"

    @pytest.mark.parametrize("bogus_first", [True, False])
    def test_two_authorization_headers_are_refused_whichever_comes_first(
        self, v1_stack: Stack, client: Client, bogus_first: bool
    ) -> None:
        pair = [("Authorization", f"Bearer {client.api_key}"), ("Authorization", "Bearer x")]
        headers = pair[::-1] if bogus_first else pair
        response = httpx.get(
            f"{v1_stack.server.url}/v1/geocode", params={"query": "Paris"}, headers=headers
        )
        assert response.status_code == 401, response.text
        assert "one Authorization header" in response.json()["error"]["message"]
        assert client.usage()["used"] == 0

    def test_a_revoked_key_is_401_and_a_key_without_the_scope_403(
        self, v1_stack: Stack, client: Client
    ) -> None:
        assert client.control.delete(f"/api-keys/{client.key_id}").status_code == 204
        revoked = client.api.get("/v1/geocode", params={"query": "Paris"})
        created = client.control.post("/api-keys", json={"name": "narrow"}).json()
        engine = create_engine(v1_stack.database_url)
        with engine.begin() as db:
            db.execute(
                text("UPDATE api_keys SET scopes = 'write:other' WHERE key_id = :k"),
                {"k": created["key"]["keyId"]},
            )
        engine.dispose()
        narrow = httpx.get(
            f"{v1_stack.server.url}/v1/geocode",
            params={"query": "Paris"},
            headers={"Authorization": f"Bearer {created['plaintext']}"},
        )

        assert revoked.status_code == 401
        assert "revoked" in revoked.json()["error"]["message"]
        assert narrow.status_code == 403
        assert_documented(narrow)
        assert narrow.json()["error"]["code"] == "FORBIDDEN"
        assert client.usage()["used"] == 0

    def test_nothing_found_unsupported_outage_and_deadline(
        self, client: Client, upstream: FakeUpstream
    ) -> None:
        not_found = client.api.get("/v1/population", params={"postal_code": "00000"})
        unsupported = client.api.get(
            "/v1/nearby", params={"lat": 40.75, "lon": -73.98, "category": "pharmacy"}
        )
        upstream.fail("census", status=503, count=-1)
        outage = client.api.get("/v1/average-income", params={"postal_code": "10002"})
        upstream.fail("census", hang_s=DEADLINE_S + 2, count=4)
        late = client.api.get("/v1/average-income", params={"postal_code": "10003"})

        statuses = [r.status_code for r in (not_found, unsupported, outage, late)]
        codes = [r.json()["error"]["code"] for r in (not_found, unsupported, outage, late)]
        assert statuses == [404, 422, 503, 504]
        assert codes == ["NOT_FOUND", "UNSUPPORTED", "UPSTREAM_UNAVAILABLE", "DEADLINE_EXCEEDED"]
        assert int(outage.headers["retry-after"]) >= 1
        for response in (not_found, unsupported, outage, late):
            assert_documented(response)
        assert client.usage()["used"] == 0

    def test_an_unknown_path_or_method_is_a_json_error(self, client: Client) -> None:
        unknown = client.api.get("/v1/weather", headers={"Accept": "text/html"})
        wrong_method = client.api.post("/v1/geocode", json={})

        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "NOT_FOUND"
        assert wrong_method.status_code == 405
        assert wrong_method.headers["allow"] == "GET"


@ON_A_REDIS_CLUSTER_TOO
class TestQuota:
    def test_a_free_account_at_its_cap_gets_402_and_pays_nothing_more(
        self, v1_stack: Stack, client: Client
    ) -> None:
        for _ in range(FREE_QUOTA):
            assert client.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200
        ran_before = v1_stack.worker.tasks_run("tools.run")

        refused = client.api.get("/v1/geocode", params={"query": "Denver"})

        assert refused.status_code == 402
        assert_documented(refused)
        error = refused.json()["error"]
        assert (error["code"], error["quota"], error["used"]) == ("QUOTA_EXCEEDED", 8, 8)
        assert "retry-after" not in refused.headers  # waiting a moment does not help
        assert refused.headers["credits-remaining"] == "0"
        assert '"credits";r=0;t=' in refused.headers["ratelimit"]
        assert v1_stack.worker.tasks_run("tools.run") == ran_before
        assert client.usage()["used"] == FREE_QUOTA


class TestCreditHeaders:
    """Issue 37, item 3: what a call cost and where the month stands, on every answer."""

    def test_an_answer_a_failure_a_refusal_and_a_batch_say_their_charge(
        self, client: Client
    ) -> None:
        ok = client.api.get("/v1/population", params={"postal_code": "10001"})
        missing = client.api.get("/v1/population", params={"postal_code": "00000"})
        invalid = client.api.get("/v1/population", params={"postal_code": "1"})
        batch = client.api.post("/v1/geocode/batch", json={"items": [{"query": "Denver"}] * 2})

        period = period_of(utcnow())
        assert {name: ok.headers[name] for name in CREDIT_HEADERS} == {
            "Credits-Charged": "1",
            "Credits-Used": "1",
            "Credits-Quota": str(FREE_QUOTA),
            "Credits-Period": period,
            "Credits-State": "ok",
            "Credits-Reset": iso_ms(period_end(period)),
        }
        assert (missing.status_code, missing.headers["credits-charged"]) == (404, "0")
        assert missing.headers["credits-used"] == "1"
        assert invalid.headers["credits-charged"] == "0"
        assert "credits-used" not in invalid.headers  # refused before it was metered
        assert (batch.headers["credits-charged"], batch.headers["credits-used"]) == ("2", "3")
        assert client.usage()["used"] == 3

    def test_a_refusal_at_the_cap_says_the_month_is_used_up(self, client: Client) -> None:
        for _ in range(FREE_QUOTA):
            assert client.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200

        refused = client.api.get("/v1/geocode", params={"query": "Denver"})

        assert refused.status_code == 402
        assert (refused.headers["credits-charged"], refused.headers["credits-used"]) == (
            "0",
            str(FREE_QUOTA),
        )
        assert refused.headers["credits-state"] == "warning"  # at 100 %: over is past it
