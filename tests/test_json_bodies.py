"""Issue 36, item 8: every JSON body has a nesting limit, answered at the edge with a 400
in the envelope of the surface asked (a body nested 5,000 deep raised RecursionError in
/register, the /v1 batches and /mcp: 500s). Likewise half a surrogate pair (`"\\ud800"`),
which json.loads takes and no UTF-8 encoder does (500s at /register and /auth/signup)."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from app.kit.json_text import MAX_JSON_DEPTH, has_lone_surrogate, too_deep
from tests.support.factories import sign_up
from tests.support.live_server import LiveServer

DEEP = 5000


def nested(depth: int, opening: str = "[", closing: str = "]", inner: str = "1") -> str:
    return opening * depth + inner + closing * depth


class TestTooDeep:
    @pytest.mark.parametrize(
        ("body", "deep"),
        [
            (nested(MAX_JSON_DEPTH), False),
            (nested(MAX_JSON_DEPTH + 1), True),
            (nested(DEEP), True),
            ('{"a":' * DEEP + "1" + "}" * DEEP, True),
            ('{"a": ' * (MAX_JSON_DEPTH + 1), True),  # unclosed: still too deep
            (json.dumps({"s": "[" * DEEP}), False),  # brackets in a string do not count
            (json.dumps({"s": '\\"[' * DEEP}), False),  # nor after escaped quotes
            ('"' + "[" * DEEP, False),  # an unterminated string runs to the end
            ('"\\' + "[" * DEEP, False),
            ("[" + '"]",' * DEEP + "1]", False),
            ("]" * DEEP + nested(10), False),  # closings first never go below zero
            ("[{" * (MAX_JSON_DEPTH // 2) + "[1]" + "}]" * (MAX_JSON_DEPTH // 2), True),
        ],
    )
    def test_shapes(self, body: str, deep: bool) -> None:
        assert too_deep(body.encode()) is deep

    def test_a_megabyte_of_quotes_and_brackets_is_scanned_in_linear_time(self) -> None:
        body = ('\\"[' * 350_000).encode()  # one unterminated string, a million bytes
        started = time.process_time()
        assert too_deep(b'"' + body) is False
        assert time.process_time() - started < 1.0


class TestLoneSurrogates:
    @pytest.mark.parametrize(
        ("body", "lone"),
        [
            (r'{"name": "a\ud800b"}', True),
            (r'{"name": "\uDBFF"}', True),
            (r'{"\udc00": 1}', True),  # in a key
            (r'["ok", ["\ude00\ud83d"]]', True),  # low before high: no pair
            (r'{"name": "\ud83d\ude00"}', False),  # a pair: one character (😀)
            (r'{"name": "\\ud800"}', False),  # an escaped backslash, then text
            (r'{"name": "\u00e9"}', False),
            (r'{"name": "\ud800', False),  # not JSON: the route answers that
        ],
    )
    def test_shapes(self, body: str, lone: bool) -> None:
        assert has_lone_surrogate(body.encode()) is lone


def post_mcp(live_server: LiveServer, api_key: str, body: str) -> httpx.Response:
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    return httpx.post(f"{live_server.url}/mcp", content=body, headers=headers, timeout=30)


@pytest.fixture
def api_key(live_server: LiveServer) -> str:
    with httpx.Client(base_url=live_server.url, timeout=30) as control:
        sign_up(control)
        return str(control.post("/api-keys", json={"name": "deep"}).json()["plaintext"])


class TestDeepBodies:
    def test_register_answers_invalid_client_metadata(self, live_server: LiveServer) -> None:
        body = '{"redirect_uris": ["https://a.example/cb"], "x": ' + nested(DEEP) + "}"
        response = httpx.post(f"{live_server.url}/register", content=body, timeout=30)

        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_client_metadata"
        assert str(MAX_JSON_DEPTH) in response.json()["error_description"]
        assert response.headers["access-control-allow-origin"] == "*"

    @pytest.mark.parametrize("path", ["/v1/geocode/batch", "/v1/reverse-geocode/batch"])
    def test_a_v1_batch_answers_the_spec_envelope(
        self, live_server: LiveServer, api_key: str, path: str
    ) -> None:
        body = '{"items": ' + nested(DEEP) + "}"
        response = httpx.post(
            live_server.url + path,
            content=body,
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
            timeout=30,
        )

        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "MALFORMED_JSON"
        assert str(MAX_JSON_DEPTH) in error["message"]

    @pytest.mark.parametrize("where", ["params", "id"])
    def test_mcp_answers_a_json_rpc_parse_error(
        self, live_server: LiveServer, api_key: str, where: str
    ) -> None:
        deep_object = '{"a": ' * DEEP + "1" + "}" * DEEP
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        call[where] = "DEEP"
        body = json.dumps(call).replace('"DEEP"', deep_object)
        response = post_mcp(live_server, api_key, body)

        assert response.status_code == 400, response.text
        answer = response.json()
        assert answer["jsonrpc"] == "2.0"
        assert answer["id"] is None
        assert answer["error"]["code"] == -32700

    @pytest.mark.parametrize("path", ["/auth/signin", "/api-keys"])
    def test_the_control_plane_answers_the_spec_envelope(
        self, live_server: LiveServer, path: str
    ) -> None:
        body = '{"email": ' + nested(DEEP) + "}"
        response = httpx.post(
            live_server.url + path,
            content=body,
            headers={"Content-Type": "application/json", "Origin": live_server.url},
            timeout=30,
        )

        assert response.status_code == 422, response.text  # as any malformed JSON there
        assert response.json()["error"]["code"] == "MALFORMED_JSON"

    def test_a_shallow_body_still_reaches_its_route(
        self, live_server: LiveServer, api_key: str
    ) -> None:
        response = httpx.post(
            f"{live_server.url}/v1/geocode/batch",
            content='{"items": ' + nested(20) + "}",
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
            timeout=30,
        )
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "INVALID_ARGUMENT"  # the route's own answer


class TestLoneSurrogateBodies:
    """Each was a 500 (UnicodeEncodeError at the database insert, or deeper)."""

    def test_register_answers_invalid_client_metadata(self, live_server: LiveServer) -> None:
        body = r'{"client_name": "ok", "redirect_uris": ["https://a.example/cb\ud800"]}'
        response = httpx.post(
            f"{live_server.url}/register",
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=30,
        )

        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_client_metadata"
        assert "surrogate" in response.json()["error_description"]

    def test_sign_up_answers_malformed_json(self, live_server: LiveServer) -> None:
        email = f"surrogate-{time.monotonic_ns()}@example.com"
        body = '{"email": "%s", "password": "correct horse battery 9", "name": "a\\ud800b"}'
        response = httpx.post(
            f"{live_server.url}/auth/signup",
            content=body % email,
            headers={"Content-Type": "application/json", "Origin": live_server.url},
            timeout=30,
        )

        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "MALFORMED_JSON"
        signin = {"email": email, "password": "correct horse battery 9"}
        signed_in = httpx.post(
            f"{live_server.url}/auth/signin",
            json=signin,
            headers={"Origin": live_server.url},
            timeout=30,
        )
        assert signed_in.status_code == 401  # no account was made

    def test_mcp_answers_a_json_rpc_parse_error(
        self, live_server: LiveServer, api_key: str
    ) -> None:
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
            '{"name": "geocode", "arguments": {"query": "Paris\\udfff"}}}'
        )
        response = post_mcp(live_server, api_key, body)

        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == -32700

    def test_a_pair_still_reaches_its_route(self, live_server: LiveServer, api_key: str) -> None:
        response = httpx.post(
            f"{live_server.url}/v1/geocode/batch",
            content='{"items": [{"query": "Paris \\ud83d\\ude00"}]}',
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
            timeout=30,
        )
        assert response.status_code != 500, response.text
        assert response.json().get("error", {}).get("code") != "MALFORMED_JSON"
