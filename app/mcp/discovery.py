"""What an agent or a directory finds before it has a key: /llms.txt (where everything
is), /tools.md (the tool reference: docs/TOOLS.md but its example answers, which need the
geodata indices this process does not load) and the MCP Server Card at
/.well-known/mcp/server-card (SEP-2127; also at `.json`, the name some directories
fetch). Public in every environment: they describe the product, not an account."""

from __future__ import annotations

import json
from functools import cache

from fastapi import APIRouter
from fastapi.responses import Response

from app.geodata.catalogue import TOOL_SPECS, policies
from app.geodata.reference import tool_reference
from app.kit.config import Settings, get_settings
from app.mcp.cards import TITLE, server_card

router = APIRouter(include_in_schema=False)

SERVER_CARD_PATHS = ("/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json")
CARD_HEADERS = {  # the draft asks for CORS open to any origin, read-only, and caching
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET",
    "Access-Control-Allow-Headers": "Content-Type",
    "Cache-Control": "public, max-age=3600",
}
TEXT_HEADERS = {"Cache-Control": "public, max-age=3600"}


def llms_txt(settings: Settings) -> str:
    """The llms.txt of the site (llmstxt.org): a title, a summary, then links by topic."""
    base = settings.base_url.rstrip("/")
    tools = ", ".join(f"`{name}`" for name in TOOL_SPECS)
    return "\n".join(
        [
            f"# {TITLE}",
            "",
            "> Population of US ZIP codes, states, counties, countries and cities; median "
            "household income and ACS profiles of US ZIP codes; geocoding and reverse "
            "geocoding worldwide, places near a point and static map images, for AI agents: "
            f"an MCP server at {base}/mcp (streamable HTTP) and the same tools over plain "
            f"HTTP at {base}/v1. Each call that returns data costs 1 credit; errors cost "
            "nothing.",
            "",
            f"Tools: {tools}. Authenticate with an API key from the dashboard "
            "(`Authorization: Bearer svc_live_ak_...`) or, from an MCP host, with OAuth "
            "(the host starts it on the server's 401).",
            "",
            "## Docs",
            "",
            f"- [Tool reference]({base}/tools.md): every tool's arguments, results, errors "
            "and cost (Markdown)",
            f"- [HTTP API, OpenAPI 3.1]({base}/v1/openapi.json): the /v1 routes, one per "
            "tool, with examples",
            f"- [HTTP API reference]({base}/v1/docs): the same, as a page",
            "",
            "## MCP",
            "",
            f"- [Server card]({base}/.well-known/mcp/server-card): the MCP endpoint, its "
            "protocol versions, authentication and tools (JSON)",
            f"- [OAuth protected resource metadata]({base}/.well-known/oauth-protected-"
            "resource/mcp): how an MCP host signs in",
            "",
            "## Account",
            "",
            f"- [Sign up]({base}/dashboard/signup): the free plan, then an API key from the "
            "dashboard",
            "",
        ]
    )


@cache
def _card(base_url: str, policies: tuple[str, ...]) -> bytes:
    """Written once per process (the arguments, what it depends on, key the cache)."""
    return json.dumps(server_card(get_settings()), ensure_ascii=False).encode()


@cache
def _reference() -> str:
    return tool_reference()


@router.get("/llms.txt")
def llms() -> Response:
    return Response(
        llms_txt(get_settings()), media_type="text/plain; charset=utf-8", headers=TEXT_HEADERS
    )


@router.get("/tools.md")
def tools_reference() -> Response:
    return Response(_reference(), media_type="text/markdown; charset=utf-8", headers=TEXT_HEADERS)


def _server_card() -> Response:
    settings = get_settings()
    card = _card(settings.base_url, policies(settings))
    return Response(card, media_type="application/json", headers=CARD_HEADERS)


for _path in SERVER_CARD_PATHS:
    router.add_api_route(_path, _server_card, methods=["GET"])
