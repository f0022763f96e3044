"""The HTTP data API's description: GET /v1/openapi.json (OpenAPI 3.1) and GET /v1/docs,
a reference page rendered on the server from that document with the dashboard's own
stylesheet (no script, no CDN). Both public, in production too: they describe the
product, not an account."""

from __future__ import annotations

import html
import json
import re
from functools import cache
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.dashboard.rendering import render
from app.geodata.catalogue import policies
from app.kit.config import Settings, get_settings
from app.v1 import examples
from app.v1.openapi import openapi_document
from app.v1.routes import ROUTES

router = APIRouter(include_in_schema=False)


@cache
def _document(base_url: str, policies: tuple[str, ...]) -> bytes:
    """The document as this deployment describes it, written once per process (the
    arguments, what it depends on, key the cache)."""
    settings = get_settings()
    return json.dumps(openapi_document(settings), ensure_ascii=False).encode()


def _key(settings: Settings) -> tuple[str, tuple[str, ...]]:
    """What the document depends on: the public address, each tool's policy."""
    return settings.base_url, policies(settings)


@router.get("/v1/openapi.json")
def openapi_json() -> Response:
    return Response(
        _document(*_key(get_settings())),
        media_type="application/json",
        headers={"Cache-Control": "public, max-age=300"},
    )


@router.get("/v1/docs")
def reference_page(request: Request) -> Response:
    return render(request, "api_reference.html", user=None, **_page(*_key(get_settings())))


def markdown(text: str) -> str:
    """The little Markdown the document uses (paragraphs, **bold**, `code`) as HTML."""
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        escaped = html.escape(" ".join(paragraph.split()), quote=False)
        escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
        escaped = re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)
        paragraphs.append(f"<p>{escaped}</p>")
    return "\n".join(paragraphs)


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(str(value) for value in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {schema.get('items', {}).get('type', 'any')}"
    return str(schema.get("type", "any"))


@cache
def _page(base_url: str, policies: tuple[str, ...]) -> dict[str, Any]:
    settings = get_settings()
    document = openapi_document(settings)
    base = settings.base_url.rstrip("/")
    operations = []
    for route in ROUTES:
        operation = document["paths"][route.path][route.method.lower()]
        ok = operation["responses"]["200"]["content"]["application/json"]
        if route.kind == "batch":
            body = json.dumps(examples.BATCH_BODIES[route.tool])
            curl = (
                f'curl -s "{base}{route.path}" -H "Authorization: Bearer $KEY" '
                f"-H 'Content-Type: application/json' -d '{body}'"
            )
        else:
            query = urlencode(examples.ARGUMENTS[route.tool], doseq=True, safe=",")
            curl = f'curl -s "{base}{route.path}?{query}" -H "Authorization: Bearer $KEY"'
        operations.append(
            {
                "id": operation["operationId"],
                "method": route.method,
                "path": route.path,
                "summary": operation["summary"],
                "description": markdown(operation["description"]),
                "parameters": [
                    {
                        "name": p["name"],
                        "type": _type(p["schema"]),
                        "required": p["required"],
                        "description": p.get("description", ""),
                    }
                    for p in operation.get("parameters", [])
                ],
                "curl": curl,
                "example": json.dumps(ok["example"], indent=2, ensure_ascii=False),
                "responses": [
                    (status, response.get("description") or _shared(document, response))
                    for status, response in operation["responses"].items()
                ],
            }
        )
    return {
        "title": document["info"]["title"],
        "introduction": markdown(document["info"]["description"]),
        "operations": operations,
    }


def _shared(document: dict[str, Any], response: dict[str, Any]) -> str:
    name = str(response.get("$ref", "")).rsplit("/", 1)[-1]
    return str(document["components"]["responses"].get(name, {}).get("description", ""))
