"""Issue 57, items 4 and 5: the HTTP data API's dated versions. Every /v1 answer names
the version it follows; a client pins one with `API-Version`; a deprecated one is served
with `Deprecation` and `Sunset`; an unknown one is 400 and one past its sunset 410, in
our envelope, listing the versions served and costing nothing. A real server and worker
(`v1_stack`)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from app.kit.clock import utcnow
from app.v1.versions import CURRENT, VERSIONS, served
from tests.mcp.conftest import Stack
from tests.v1.conftest import Client

TODAY = utcnow().date()
DEPRECATED = next(v for v in served(TODAY) if v.deprecated is not None)
RETIRED = next(v for v in VERSIONS if v.retired(TODAY))
SERVED = [v.name for v in served(TODAY)]


def geocode(client: Client, version: str | None = None) -> httpx.Response:
    headers = {"API-Version": version} if version is not None else {}
    return client.api.get("/v1/geocode", params={"query": "Denver", "limit": 1}, headers=headers)


class TestTheVersionIsNamed:
    def test_an_unpinned_call_follows_the_current_version(self, client: Client) -> None:
        answer = geocode(client)

        assert answer.status_code == 200, answer.text
        assert answer.headers["API-Version"] == CURRENT.name
        assert "Deprecation" not in answer.headers
        assert "Sunset" not in answer.headers

    def test_every_v1_answer_names_it_refusals_and_documents_too(
        self, client: Client, v1_stack: Stack
    ) -> None:
        url = v1_stack.server.url
        answers = [
            httpx.get(f"{url}/v1/geocode", params={"query": "Denver"}),  # 401, no key
            client.api.get("/v1/geocode", params={"query": "Denver", "limit": 99}),  # 400
            client.api.get("/v1/population", params={"postal_code": "00000"}),  # 404
            httpx.get(f"{url}/v1/openapi.json"),
            httpx.get(f"{url}/v1/geocode", params={"api_key": "x"}),  # the URL guard's 400
        ]

        assert [a.status_code for a in answers] == [401, 400, 404, 200, 400]
        assert [a.headers.get("API-Version") for a in answers] == [CURRENT.name] * 5
        assert "API-Version" not in httpx.get(f"{url}/healthz").headers  # /v1 only

    def test_a_pinned_current_version_is_served_as_it_is(self, client: Client) -> None:
        answer = geocode(client, CURRENT.name)

        assert answer.status_code == 200
        assert answer.headers["API-Version"] == CURRENT.name


class TestDeprecatedVersions:
    def test_a_deprecated_version_is_served_with_deprecation_and_sunset(
        self, client: Client
    ) -> None:
        assert DEPRECATED.deprecated is not None
        assert DEPRECATED.sunset is not None
        answer = geocode(client, DEPRECATED.name)

        assert answer.status_code == 200, answer.text
        assert answer.json()["results"][0]["name"] == "Denver"
        assert answer.headers["API-Version"] == DEPRECATED.name
        # RFC 9745: @ and Unix seconds; RFC 8594: an HTTP date
        deprecated_at = datetime.fromtimestamp(int(answer.headers["Deprecation"][1:]), UTC)
        assert deprecated_at.date() == DEPRECATED.deprecated
        assert parsedate_to_datetime(answer.headers["Sunset"]).date() == DEPRECATED.sunset
        assert 'rel="deprecation"' in answer.headers["Link"]


class TestRefusedVersions:
    def test_an_unknown_version_is_400_naming_the_versions_and_costs_nothing(
        self, client: Client
    ) -> None:
        for version in ("2025-01-01", "latest", "2026-12-07x"):
            answer = geocode(client, version)

            assert answer.status_code == 400, answer.text
            error = answer.json()["error"]
            assert error["code"] == "UNKNOWN_API_VERSION"
            assert error["versions"] == SERVED
            assert error["current"] == CURRENT.name
            assert CURRENT.name in error["message"]
            assert answer.headers["API-Version"] == CURRENT.name
        assert client.usage()["used"] == 0

    def test_a_version_past_its_sunset_is_410_saying_what_to_pin(self, client: Client) -> None:
        answer = geocode(client, RETIRED.name)

        assert answer.status_code == 410, answer.text
        error = answer.json()["error"]
        assert error["code"] == "API_VERSION_SUNSET"
        assert f"pin {CURRENT.name}" in error["message"]
        assert error["versions"] == SERVED
        assert client.usage()["used"] == 0

    def test_a_version_sent_twice_is_refused(self, client: Client) -> None:
        answer = client.api.get(
            "/v1/geocode",
            params={"query": "Denver"},
            headers=[("API-Version", CURRENT.name), ("API-Version", DEPRECATED.name)],
        )

        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "UNKNOWN_API_VERSION"

    def test_the_version_is_checked_before_the_key(self, v1_stack: Stack) -> None:
        answer = httpx.get(
            f"{v1_stack.server.url}/v1/geocode",
            params={"query": "Denver"},
            headers={"API-Version": "1999-01-01"},
        )

        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "UNKNOWN_API_VERSION"


class TestTheDocumentSaysSo:
    def test_openapi_names_the_versions_and_the_headers(self, v1_stack: Stack) -> None:
        document = httpx.get(f"{v1_stack.server.url}/v1/openapi.json").json()

        assert document["info"]["version"] == CURRENT.name
        for version in VERSIONS:
            assert f"`{version.name}`" in document["info"]["description"]
        headers = document["components"]["headers"]
        assert {"API-Version", "Deprecation", "Sunset"} <= set(headers)
        geocode_op = document["paths"]["/v1/geocode"]["get"]
        assert "API-Version" in geocode_op["responses"]["200"]["headers"]
        assert "410" in geocode_op["responses"]
