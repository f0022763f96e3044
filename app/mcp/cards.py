"""How the hosted MCP server describes itself before anyone connects.

- `server_json`: the entry for the MCP registry (server.json, schema 2025-12-11): the
  hosted remote (streamable HTTP at /mcp) and its credential, an `Authorization: Bearer`
  API key (or OAuth, which an MCP host starts by itself on the 401). Written by
  `geosvc server-json` for `mcp-publisher publish` (docs/DEPLOYMENT.md).
- `server_card`: the MCP Server Card of SEP-2127 (draft), served at
  /.well-known/mcp/server-card: the same fields, plus the protocol versions and the
  authentication schemes of the remote, the server's capabilities and its tools as
  `tools/list` gives them.

Both from Settings (the public address) and the tool catalogue, so they cannot drift from
what /mcp answers.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from app.geodata.catalogue import TOOL_SPECS
from app.kit.config import Settings
from app.mcp import map_app
from app.mcp.server import SERVER_NAME, SERVER_VERSION, tool_definition

SERVER_JSON_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SERVER_CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
TITLE = "Geospatial Data Service"
# The registry allows 100 characters.
REGISTRY_DESCRIPTION = "US population and income by ZIP, geocoding, places nearby and maps"
AUTHORIZATION = {
    "name": "Authorization",
    "description": "An API key from the dashboard, sent as `Bearer svc_live_ak_...`. Leave it "
    "out to sign in with OAuth instead (the server answers 401 with its metadata).",
    "isRequired": False,
    "isSecret": True,
    "placeholder": "Bearer svc_live_ak_...",
}


def registry_name(settings: Settings, server: str = SERVER_NAME) -> str:
    """`com.example.geo/geosvc` for https://geo.example.com: the registry verifies a
    reverse-DNS namespace against the domain the remote is served from."""
    host = urlsplit(settings.base_url).hostname or "localhost"
    return ".".join(reversed(host.split("."))) + "/" + server


def _base(settings: Settings) -> str:
    return settings.base_url.rstrip("/")


def _common(settings: Settings) -> dict[str, Any]:
    base = _base(settings)
    return {
        "name": registry_name(settings),
        "title": TITLE,
        "description": REGISTRY_DESCRIPTION,
        "version": SERVER_VERSION,
        "websiteUrl": f"{base}/",
        "icons": [
            {
                "src": f"{base}/dashboard/static/favicon.svg",
                "mimeType": "image/svg+xml",
                "sizes": ["any"],
            }
        ],
    }


def server_json(settings: Settings) -> dict[str, Any]:
    remote = {"type": "streamable-http", "url": f"{_base(settings)}/mcp"}
    return {
        "$schema": SERVER_JSON_SCHEMA,
        **_common(settings),
        "remotes": [{**remote, "headers": [AUTHORIZATION]}],
    }


def server_card(settings: Settings) -> dict[str, Any]:
    remote = {
        "type": "streamable-http",
        "url": f"{_base(settings)}/mcp",
        "supportedProtocolVersions": list(KNOWN_PROTOCOL_VERSIONS),
        "headers": [AUTHORIZATION],
        "authentication": {"required": True, "schemes": ["bearer", "oauth2"]},
    }
    tools = types.ListToolsResult(
        tools=[tool_definition(spec, settings) for spec in TOOL_SPECS.values()]
    )
    listed = tools.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"]
    return {
        "$schema": SERVER_CARD_SCHEMA,
        **_common(settings),
        "remotes": [remote],
        "capabilities": {
            "tools": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
            "extensions": map_app.extension_settings(),
        },
        "tools": listed,
    }
