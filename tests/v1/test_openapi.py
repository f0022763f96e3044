"""GET /v1/openapi.json and the reference page /v1/docs: public, from the catalogue, every
example valid against its schema."""

from __future__ import annotations

import html
from typing import Any

import httpx
import jsonschema

from app.geodata.catalogue import TOOL_SPECS
from app.v1.routes import ROUTES
from tests.mcp.conftest import Stack


def validate(instance: Any, ref: dict[str, Any], document: dict[str, Any]) -> None:
    """`instance` against `ref` (a `$ref` into the document's components)."""
    schema = {**ref, "components": document["components"]}
    jsonschema.Draft202012Validator(schema).validate(instance)


class TestOpenApi:
    def test_the_document_is_public_and_describes_every_route(self, v1_stack: Stack) -> None:
        response = httpx.get(f"{v1_stack.server.url}/v1/openapi.json")  # no key

        assert response.status_code == 200
        document = response.json()
        assert document["openapi"] == "3.1.0"
        assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert document["security"] == [{"bearer": []}]
        assert document["servers"] == [{"url": v1_stack.server.url}]
        image = ("/v1/static-map/images/{image_id}", "get")  # an MCP answer's link
        tile = ("/v1/tiles/{z}/{x}/{y}.png", "get")  # the map tiles (app.tiles)
        jobs = {  # bulk jobs (app.jobs)
            ("/v1/jobs", "post"),
            ("/v1/jobs", "get"),
            ("/v1/jobs/{job_id}", "get"),
            ("/v1/jobs/{job_id}", "delete"),
            ("/v1/jobs/{job_id}/results", "get"),
        }
        assert {(r.path, r.method.lower()) for r in ROUTES} | {image, tile} | jobs == {
            (path, method) for path, item in document["paths"].items() for method in item
        }
        tools = {op["operationId"] for item in document["paths"].values() for op in item.values()}
        assert set(TOOL_SPECS) <= tools
        nearby = document["paths"]["/v1/nearby"]["get"]
        category = next(p for p in nearby["parameters"] if p["name"] == "category")
        assert category["schema"]["enum"] == ["city", "airport", "postal_code"]  # answered here

    def test_every_example_matches_its_schema(self, v1_stack: Stack) -> None:
        document = httpx.get(f"{v1_stack.server.url}/v1/openapi.json").json()
        checked = 0
        for item in document["paths"].values():
            for operation in item.values():
                body = operation.get("requestBody", {}).get("content", {})
                for media in body.values():
                    validate(media["example"], media["schema"], document)
                    checked += 1
                answer = operation["responses"].get("200") or operation["responses"]["202"]
                for media in answer.get("content", {}).values():
                    if "example" in media:
                        validate(media["example"], media["schema"], document)
                        checked += 1
        for response in document["components"]["responses"].values():
            media = response["content"]["application/json"]
            validate(media["example"], media["schema"], document)
            checked += 1
        assert checked >= 8 + 2 + 9

    def test_the_reference_page_lists_every_operation(self, v1_stack: Stack) -> None:
        page = httpx.get(f"{v1_stack.server.url}/v1/docs")

        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "content-security-policy" in page.headers
        for route in ROUTES:
            assert f"{route.method} {route.path}</span>" in page.text
        shown = html.unescape(page.text)
        assert f'curl -s "{v1_stack.server.url}/v1/geocode?query=Austin,+TX' in shown
        assert "<script" not in page.text.split("</head>", 1)[1]  # no script: rendered here
