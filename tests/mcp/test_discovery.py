"""Finding the service before holding a key: the MCP registry entry (`geosvc server-json`),
the Server Card at /.well-known/mcp/server-card and /llms.txt, on the real server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema
import pytest

from app.mcp.host_views import host_views
from app.mcp.map_app import MIME_TYPE as MAP_APP_MIME_TYPE
from tests.mcp.conftest import Account, Stack, connect

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).with_name("server_json_schema.json")).read_text())
GEOSVC = str(Path(sys.executable).with_name("geosvc"))


def validate_server_json(document: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(document)


def written_server_json(tmp_path: Path, base_url: str) -> dict[str, Any]:
    out = tmp_path / "server.json"
    env = {"PATH": "/usr/bin:/bin", "GEOSVC_BASE_URL": base_url}
    done = subprocess.run(
        [GEOSVC, "server-json", "--out", str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(out.read_text())
    return document


class TestServerJson:
    def test_the_registry_entry_is_the_hosted_remote_with_its_key(self, tmp_path: Path) -> None:
        document = written_server_json(tmp_path, "https://geo.example.com")

        validate_server_json(document)
        assert document["$schema"].endswith("/2025-12-11/server.schema.json")
        # the registry checks a reverse-DNS namespace against the remote's domain
        assert document["name"] == "com.example.geo/geosvc"
        (remote,) = document["remotes"]
        assert remote["type"] == "streamable-http"
        assert remote["url"] == "https://geo.example.com/mcp"
        (header,) = remote["headers"]
        assert header["name"] == "Authorization"
        assert header["isSecret"] is True
        assert header["placeholder"].startswith("Bearer svc_live_ak_")
        assert "packages" not in document

    def test_the_schema_check_refuses_what_the_registry_refuses(self, tmp_path: Path) -> None:
        document = written_server_json(tmp_path, "https://geo.example.com")
        for broken in (
            {**document, "description": "x" * 101},
            {**document, "name": "geosvc"},
            {**document, "remotes": [{"type": "streamable-http", "url": "geo.example.com/mcp"}]},
            {key: value for key, value in document.items() if key != "version"},
        ):
            with pytest.raises(jsonschema.ValidationError):
                validate_server_json(broken)


class TestServerCard:
    @pytest.mark.parametrize(
        "path", ["/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json"]
    )
    async def test_the_card_describes_what_mcp_answers(
        self, stack: Stack, account: Account, path: str
    ) -> None:
        response = httpx.get(f"{stack.server.url}{path}", timeout=30)  # no key

        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.headers["access-control-allow-origin"] == "*"
        assert "max-age" in response.headers["cache-control"]
        card = response.json()
        validate_server_json(card)  # the card is server.json's shape, plus its own fields
        (remote,) = card["remotes"]
        assert remote["url"] == f"{stack.server.url}/mcp"
        assert {"2025-11-25", "2026-07-28"} <= set(remote["supportedProtocolVersions"])
        assert remote["authentication"] == {"required": True, "schemes": ["bearer", "oauth2"]}
        assert card["capabilities"] == {
            "tools": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
            "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [MAP_APP_MIME_TYPE]}},
        }
        async with connect(stack.mcp_url, account.api_key) as client:
            listed = (await client.list_tools()).tools
        assert [tool["name"] for tool in card["tools"]] == [tool.name for tool in listed]
        for described, tool in zip(card["tools"], listed, strict=True):
            assert described["description"] == tool.description
            assert described["inputSchema"] == tool.input_schema
            assert described["outputSchema"] == tool.output_schema


class TestLlmsTxt:
    def test_every_link_resolves_on_the_server(self, stack: Stack) -> None:
        response = httpx.get(f"{stack.server.url}/llms.txt", timeout=30)

        assert response.status_code == 200
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        text = response.text
        assert text.startswith("# Geospatial Data Service\n\n> ")
        links = re.findall(r"\]\((\S+?)\)", text)
        assert {f"{stack.server.url}{p}" for p in ("/tools.md", "/v1/openapi.json")} <= set(links)
        for link in links:
            assert urlsplit(link).netloc == urlsplit(stack.server.url).netloc
            answer = httpx.get(link, timeout=30)  # no key, no cookie: as an agent arrives
            assert answer.status_code == 200, link

    def test_the_tool_reference_is_docs_tools_md(self, stack: Stack, geodata_dir: Path) -> None:
        """All of it but its last part, the example answers as hosts show them (written
        from the geodata indices, which the api process does not load)."""
        response = httpx.get(f"{stack.server.url}/tools.md", timeout=30)

        assert response.status_code == 200
        assert response.headers["content-type"] == "text/markdown; charset=utf-8"
        committed = (ROOT / "docs" / "TOOLS.md").read_text(encoding="utf-8")
        assert committed == f"{response.text}\n{host_views()}"
