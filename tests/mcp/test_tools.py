"""Six metered tools over /mcp: answers, errors, credits, quotas, keys."""

from __future__ import annotations

import base64
import io
import json
import socket
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema
import pytest
import redis
from mcp.shared.exceptions import MCPError
from PIL import Image

from app.geodata.catalogue import TOOL_SPECS
from tests.billing.conftest import subscribe
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import FREE_QUOTA, STANDARD_QUOTA, Account, Stack, connect, structured

TOOL_NAMES = {
    "get_population",
    "get_average_income",
    "geocode",
    "reverse_geocode",
    "search_nearby",
    "static_map",
    "get_demographics",
}

# One successful call of every tool (get_average_income goes to the fake Census API).
GOOD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_population", {"postal_code": "10001"}),
    ("get_average_income", {"postal_code": "94103"}),
    ("geocode", {"query": "Austin, TX", "limit": 1}),
    ("reverse_geocode", {"lat": 48.8566, "lon": 2.3522}),
    ("search_nearby", {"lat": 30.2672, "lon": -97.7431, "radius_m": 50000, "category": "airport"}),
    ("static_map", {"markers": [{"lat": 30.27, "lon": -97.74, "color": "#ff0000"}]}),
]


def usage(account: Account) -> dict[str, Any]:
    response = account.http.get("/usage")
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_for_ledger(stack: Stack, user_id: str, expected: int, deadline_s: float = 20) -> int:
    deadline = time.monotonic() + deadline_s
    while (count := stack.ledger_count(user_id)) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return count


def raw_call(url: str, authorization: str | None, **headers: str) -> httpx.Response:
    """A tools/call JSON-RPC POST without an MCP client (to see HTTP-level answers)."""
    sent = {"Accept": "application/json, text/event-stream", **headers}
    if authorization is not None:
        sent["Authorization"] = authorization
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_population", "arguments": {"postal_code": "10001"}},
    }
    return httpx.post(url, json=body, headers=sent, timeout=30)


class TestListTools:
    @pytest.mark.parametrize("mode", ["legacy", "auto"])
    async def test_every_tool_with_schemas_and_annotations(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}

        assert set(tools) == TOOL_NAMES
        for tool in tools.values():
            assert "1 credit" in (tool.description or "")
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema is not None
            assert tool.output_schema["type"] == "object"
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is True
        assert tools["get_average_income"].annotations.open_world_hint is True  # upstream here
        assert tools["geocode"].annotations.open_world_hint is False
        radius = tools["search_nearby"].input_schema["properties"]["radius_m"]
        assert (radius["minimum"], radius["maximum"]) == (1, 50000)
        assert tools["geocode"].input_schema["additionalProperties"] is False
        call, batch, error = tools["geocode"].output_schema["anyOf"]
        assert "query" in call["properties"]  # the call's result, written once:
        item = batch["properties"]["results"]["items"]["properties"]
        assert item["result"] == {"$ref": "#/anyOf/0"}  # a batch's items refer to it
        assert error == {"required": ["error"]}  # the envelope, for clients that check errors
        category = tools["search_nearby"].input_schema["properties"]["category"]
        assert category["enum"] == ["city", "airport", "postal_code"]  # what is answered here

    async def test_the_server_says_what_it_is(self, stack: Stack, account: Account) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            await client.list_tools()
            info = client.server_info
            listed = [tool.name for tool in (await client.list_tools()).tools]

        assert info is not None
        assert (info.name, info.version) == ("geosvc", "0.1.0")
        assert "ZIP code" in (info.description or "")
        assert info.website_url == stack.server.url
        assert info.icons
        assert info.icons[0].mime_type == "image/svg+xml"
        icon = httpx.get(info.icons[0].src)
        assert (icon.status_code, icon.headers["content-type"]) == (200, "image/svg+xml")
        assert listed == list(TOOL_SPECS)  # the catalogue's order, whatever the deployment

    async def test_the_instructions_say_what_each_tool_answers(
        self, stack: Stack, account: Account
    ) -> None:
        # issue 52: they still said "US population and household income by ZIP code"
        async with connect(stack.mcp_url, account.api_key) as client:
            await client.list_tools()
            instructions = client.instructions or ""
        for name in TOOL_SPECS:
            assert f"{name}:" in instructions, name
        for answered in ("country or a city", "ACS profile", "airports", "estimate"):
            assert answered in instructions


class TestCalls:
    @pytest.mark.parametrize("mode", ["legacy", "auto"])
    async def test_every_tool_answers_and_each_costs_one_credit(
        self, stack: Stack, account: Account, mode: str
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, mode) as client:
            results = {name: await client.call_tool(name, args) for name, args in GOOD_CALLS}

        for name, result in results.items():
            assert not result.is_error, (name, result.content)
            assert "source" in structured(result)
        assert structured(results["get_population"])["population"] == 27004
        assert structured(results["get_average_income"])["amount"] == 94_354
        assert structured(results["reverse_geocode"])["countryCode"] == "FR"
        assert usage(account)["used"] == len(GOOD_CALLS)
        assert wait_for_ledger(stack, account.user_id, len(GOOD_CALLS)) == len(GOOD_CALLS)

    async def test_static_map_has_a_png_image_block(self, stack: Stack, account: Account) -> None:
        arguments = {"center": {"lat": 40.7, "lon": -74.0}, "zoom": 9, "width": 320, "height": 200}
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("static_map", arguments)

        image_blocks = [block for block in result.content if block.type == "image"]
        assert len(image_blocks) == 1
        assert image_blocks[0].mime_type == "image/png"
        image = Image.open(io.BytesIO(base64.b64decode(image_blocks[0].data)))
        assert image.size == (320, 200)
        assert structured(result)["zoom"] == 9

    async def test_static_map_counts_and_names_what_it_could_not_draw(
        self, stack: Stack, account: Account
    ) -> None:
        arguments = {
            "center": {"lat": 50.0, "lon": 20.0},
            "zoom": 4,
            "markers": [
                {"lat": 55.75, "lon": 37.62, "label": "Moscow"},
                {"lat": 30.04, "lon": 31.24, "label": "Cairo"},
                {"lat": 35.68, "lon": 139.77, "label": "東京駅"},
            ],
        }
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("static_map", arguments)

        answer = structured(result)
        assert answer["markers"] == 1
        fonts, outside = answer["warnings"]
        assert fonts.startswith("Label '東京駅': its characters '東京駅' are not in the map font")
        assert outside.startswith("2 of 3 markers are outside the map's view and not drawn: ")
        assert "'Cairo', '東京駅'; leave out center and zoom" in outside
        assert result.content[0].type == "text"
        assert "with 1 marker(s) (see warnings)." in result.content[0].text

    async def test_failed_calls_cost_nothing(
        self, stack: Stack, account: Account, upstream: FakeUpstream
    ) -> None:
        upstream.fail("census", status=503, count=-1)
        async with connect(stack.mcp_url, account.api_key) as client:
            invalid = await client.call_tool("get_population", {"postal_code": 10001.5})
            unknown_field = await client.call_tool("geocode", {"query": "Paris", "lang": "fr"})
            bad_latitude = await client.call_tool("reverse_geocode", {"lat": 91, "lon": 0})
            not_found = await client.call_tool("get_population", {"postal_code": "00000"})
            outage = await client.call_tool("get_average_income", {"postal_code": "10001"})
            lacking = await client.call_tool(
                "search_nearby", {"lat": 40.75, "lon": -73.98, "category": "pharmacy"}
            )
            with pytest.raises(MCPError) as unknown_tool:  # a protocol error, not a result
                await client.call_tool("get_weather", {})
            ok = await client.call_tool("get_population", {"postal_code": "94103"})

        assert unknown_tool.value.code == -32602
        assert "Unknown tool 'get_weather'" in unknown_tool.value.message
        codes = [
            structured(r)["error"]["code"] if r.is_error else None
            for r in (invalid, unknown_field, bad_latitude, not_found, outage, lacking, ok)
        ]
        assert codes == [
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "NOT_FOUND",
            "UPSTREAM_UNAVAILABLE",
            "UNSUPPORTED",  # not "no pharmacy here": this deployment has no pharmacies
            None,
        ]
        assert "answers: city, airport, postal_code" in structured(lacking)["error"]["message"]
        assert upstream.requests("census") == 2  # tried twice (GEOSVC_UPSTREAM_ATTEMPTS)
        assert usage(account)["used"] == 1
        assert wait_for_ledger(stack, account.user_id, 1) == 1

    async def test_a_call_leaves_no_stored_result_behind(
        self, stack: Stack, account: Account
    ) -> None:
        """A worker's reply is stored (and published) under its call id; the api deletes
        it with the call's commit or release, answered or failed alike."""
        env = stack.server.env
        stored = f"{env['GEOSVC_REDIS_KEY_PREFIX']}celery-task-meta-call_*"
        client = redis.Redis.from_url(env["GEOSVC_REDIS_URL"])
        before = set(client.scan_iter(stored, count=1000))
        async with connect(stack.mcp_url, account.api_key) as client_session:
            ok = await client_session.call_tool("geocode", {"query": "Austin, TX", "limit": 1})
            missing = await client_session.call_tool("get_population", {"postal_code": "00000"})

        assert (ok.is_error, structured(missing)["error"]["code"]) == (False, "NOT_FOUND")
        assert set(client.scan_iter(stored, count=1000)) <= before
        client.close()

    async def test_a_page_past_the_last_costs_nothing(self, stack: Stack, account: Account) -> None:
        near = {"lat": 40.7580, "lon": -73.9855, "radius_m": 2000, "category": "postal_code"}
        async with connect(stack.mcp_url, account.api_key) as client:
            first = await client.call_tool("search_nearby", {**near, "limit": 50})
            total = structured(first)["total"]
            # a cursor as search_nearby writes them, one page beyond the end
            past = base64.urlsafe_b64encode(f"offset:{total + 50}".encode()).decode().rstrip("=")
            beyond = await client.call_tool("search_nearby", {**near, "cursor": past})

        assert 0 < total <= 50
        assert beyond.is_error
        error = structured(beyond)["error"]
        assert error["code"] == "NOT_FOUND"
        assert f"all {total} in range" in error["message"]
        assert usage(account)["used"] == 1

    async def test_error_results_match_the_output_schema(
        self, stack: Stack, account: Account, upstream: FakeUpstream
    ) -> None:
        upstream.fail("census", status=500, count=-1)
        calls = [
            ("get_population", {"postal_code": "123"}),
            ("get_population", {"postal_code": "00000"}),
            ("get_average_income", {"postal_code": "10001"}),
            ("geocode", {"query": "zzzzqqqqxxxx nowhere"}),
            ("search_nearby", {"lat": 0, "lon": -140, "radius_m": 1000}),
            ("static_map", {"width": 10}),
        ]
        async with connect(stack.mcp_url, account.api_key) as client:
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
            results = [(name, await client.call_tool(name, args)) for name, args in calls]

        for name, result in results:
            assert result.is_error, name
            body = structured(result)
            assert set(body["error"]) >= {"code", "message"}
            jsonschema.validate(body, schemas[name])
        assert usage(account)["used"] == 0


class TestQuota:
    async def test_free_account_at_its_cap_is_refused_before_any_work(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            for _ in range(FREE_QUOTA):
                result = await client.call_tool("get_population", {"postal_code": "10001"})
                assert not result.is_error
            ran_before = stack.worker.tasks_run("tools.run")
            refused = await client.call_tool("get_population", {"postal_code": "10001"})
            ran_after = stack.worker.tasks_run("tools.run")
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        assert refused.is_error
        error = structured(refused)["error"]
        assert error["code"] == "QUOTA_EXCEEDED"
        assert (error["quota"], error["used"]) == (FREE_QUOTA, FREE_QUOTA)
        assert error["period"] == usage(account)["period"]
        assert error["resetsAt"].endswith("-01T00:00:00.000Z")
        jsonschema.validate(structured(refused), schemas["get_population"])
        assert ran_after == ran_before  # the refused call never reached a worker
        assert usage(account) | {"percent": 0} == usage(account) | {
            "used": FREE_QUOTA,
            "state": "warning",
            "percent": 0,
        }

    async def test_standard_account_goes_over_its_quota(
        self, stack: Stack, account: Account
    ) -> None:
        subscribe(account.http)
        calls = STANDARD_QUOTA + 2
        async with connect(stack.mcp_url, account.api_key) as client:
            for _ in range(calls):
                result = await client.call_tool("geocode", {"query": "Denver"})
                assert not result.is_error, result.content

        state = usage(account)
        assert (state["mode"], state["used"], state["state"]) == ("standard", calls, "over")
        assert wait_for_ledger(stack, account.user_id, calls) == calls


class TestAuthentication:
    @pytest.mark.parametrize(
        "authorization",
        [
            "Bearer svc_live_ak_abc",
            "Bearer svc_live_ak_unknownkey123_" + "A" * 40,
        ],
    )
    def test_malformed_and_unknown_keys_get_403_with_the_reason(
        self, stack: Stack, authorization: str
    ) -> None:
        response = raw_call(stack.mcp_url, authorization)

        assert response.status_code == 403  # not 401: clients would start OAuth discovery
        assert "www-authenticate" not in response.headers
        error = response.json()["error"]
        assert error["code"] == -32001
        assert error["data"]["code"] == "UNAUTHENTICATED"
        assert error["message"] == error["data"]["message"]

    @pytest.mark.parametrize(
        ("authorization", "error"),
        [(None, None), ("Basic dXNlcjpwYXNz", "invalid_request"), ("Bearer xyz", "invalid_token")],
    )
    def test_no_key_gets_401_with_where_to_sign_in(
        self, stack: Stack, authorization: str | None, error: str | None
    ) -> None:
        """Without a key, an MCP host starts the OAuth sign-in from this answer."""
        response = raw_call(stack.mcp_url, authorization)

        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert 'resource_metadata="' in challenge
        assert (f'error="{error}"' in challenge) == (error is not None)
        assert response.json()["error"]["data"]["code"] == "UNAUTHENTICATED"

    async def test_a_revoked_key_gets_403_on_its_next_call(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key, "legacy") as client:
            result = await client.call_tool("get_population", {"postal_code": "10001"})
            assert not result.is_error
        assert account.http.delete(f"/api-keys/{account.key_id}").status_code == 204

        response = raw_call(stack.mcp_url, f"Bearer {account.api_key}")

        assert response.status_code == 403
        assert "revoked" in response.json()["error"]["message"]
        assert usage(account)["used"] == 1

    async def test_an_expired_key_gets_403_like_a_revoked_one(
        self, stack: Stack, account: Account
    ) -> None:
        soon = datetime.now(UTC) + timedelta(seconds=1.5)
        created = account.http.post("/api-keys", json={"name": "ci", "expiresAt": soon.isoformat()})
        plaintext = created.json()["plaintext"]
        async with connect(stack.mcp_url, plaintext) as client:
            result = await client.call_tool("get_population", {"postal_code": "10001"})
            assert not result.is_error  # works until then, and is cached by the api

        deadline = time.monotonic() + 10
        while (response := raw_call(stack.mcp_url, f"Bearer {plaintext}")).status_code == 200:
            assert time.monotonic() < deadline, "the expired key is still accepted"
            time.sleep(0.2)  # polling interval (each poll is a call)

        assert datetime.now(UTC) >= soon
        assert response.status_code == 403
        assert response.json()["error"]["data"]["code"] == "UNAUTHENTICATED"
        assert "expired" in response.json()["error"]["message"]

    def test_the_control_plane_session_is_not_a_key(self, stack: Stack, account: Account) -> None:
        cookie = account.http.cookies.get("svc_session")
        response = raw_call(stack.mcp_url, None, Cookie=f"svc_session={cookie}")
        assert response.status_code == 401


class TestTransportChecks:
    """Host, Origin and Content-Type, refused before the credential is read, each with a
    JSON-RPC error whose `data` is our error object (the SDK answered in plain text)."""

    @pytest.mark.parametrize(
        ("headers", "status", "code"),
        [
            ({"Host": "evil.example"}, 421, "MISDIRECTED_REQUEST"),
            ({"Host": "localhost:evil.example"}, 421, "MISDIRECTED_REQUEST"),
            ({"Origin": "http://evil.example"}, 403, "FORBIDDEN"),
            ({"Origin": "null"}, 403, "FORBIDDEN"),
            ({"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
            ({"Content-Type": "application/jsonx"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
        ],
    )
    @pytest.mark.parametrize("with_key", [True, False])
    def test_a_refusal_is_json_and_never_charged(
        self,
        stack: Stack,
        account: Account,
        headers: dict[str, str],
        status: int,
        code: str,
        with_key: bool,
    ) -> None:
        before = usage(account)["used"]
        authorization = f"Bearer {account.api_key}" if with_key else None
        response = raw_call(stack.mcp_url, authorization, **headers)
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["code"] == -32600
        assert error["data"]["code"] == code
        assert next(iter(headers.values())) in error["message"]
        assert usage(account)["used"] == before

    @pytest.mark.parametrize(
        "headers",
        [
            {"Host": "LOCALHOST:{port}"},
            {"Origin": "http://localhost:5173"},
            {"Content-Type": "application/json; charset=utf-8"},
            {"MCP-Protocol-Version": "2025-06-18"},
        ],
    )
    def test_allowed_values_reach_the_tool(
        self, stack: Stack, account: Account, headers: dict[str, str]
    ) -> None:
        port = str(urlsplit(stack.mcp_url).port)
        sent = {name: value.replace("{port}", port) for name, value in headers.items()}
        response = raw_call(stack.mcp_url, f"Bearer {account.api_key}", **sent)
        assert response.status_code == 200, response.text
        assert response.json()["result"]["structuredContent"]["population"] > 0


class TestInvalidRequests:
    def test_two_authorization_headers_are_refused(self, stack: Stack, account: Account) -> None:
        headers = [
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", f"Bearer {account.api_key}"),
            ("Authorization", "Bearer svc_live_ak_unknownkey123_" + "A" * 40),
        ]
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        response = httpx.post(stack.mcp_url, json=body, headers=headers, timeout=30)
        assert response.status_code == 401, response.text
        assert "one Authorization header" in response.text

    @pytest.mark.parametrize("request_id", [{"a": 1}, 1.5, True, None, [1]])
    def test_an_id_that_is_not_a_string_or_integer_is_refused_not_ignored(
        self, stack: Stack, account: Account, request_id: object
    ) -> None:
        """The SDK took such a request for a notification: 202, no answer, ever."""
        before = usage(account)["used"]
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "get_population", "arguments": {"postal_code": "10001"}},
        }
        headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {account.api_key}",
        }
        response = httpx.post(stack.mcp_url, json=body, headers=headers, timeout=30)
        assert response.status_code == 400, response.text
        answer = response.json()
        assert answer["id"] is None
        assert answer["error"]["code"] == -32600
        assert usage(account)["used"] == before


class TestRoutingHeaders:
    def test_whitespace_around_a_value_is_not_part_of_it(
        self, stack: Stack, account: Account
    ) -> None:
        """RFC 9110, 5.5 (found by the conformance suite, tests/mcp/test_conformance.py):
        httptools keeps the whitespace after a value, and the SDK compared
        `Mcp-Name: "get_population  "` with the body's name (400 HeaderMismatch). Raw bytes:
        httpx refuses to send such a header, and the suite's key proxy trims it."""
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "get_population",
                    "arguments": {"postal_code": "94103"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            }
        ).encode()
        headers = [
            b"Authorization: Bearer " + account.api_key.encode(),
            b"Content-Type: application/json",
            b"Accept: application/json, text/event-stream",
            b"MCP-Protocol-Version: 2026-07-28 ",
            b"Mcp-Method: tools/call\t",
            b"Mcp-Name:   get_population \t ",
        ]

        status, answer = _post_raw(stack.server.url, headers, body)

        assert status == 200, answer
        assert json.loads(answer)["result"]["structuredContent"]["postalCode"] == "94103"


def _post_raw(url: str, headers: list[bytes], body: bytes) -> tuple[int, str]:
    parts = urlsplit(url)
    request = b"\r\n".join(
        [
            b"POST /mcp HTTP/1.1",
            f"Host: {parts.netloc}".encode(),
            f"Content-Length: {len(body)}".encode(),
            b"Connection: close",
            *headers,
            b"",
            b"",
        ]
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), payload.decode(errors="replace")
