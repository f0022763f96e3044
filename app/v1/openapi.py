"""The OpenAPI 3.1 document of the HTTP data API (GET /v1/openapi.json), written from the
tool catalogue and the route table: each operation's parameters are its tool's argument
schema, its answer the tool's result model, so the document cannot drift from the tools.
Public in every environment (it describes the product, not an account).
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from app.geodata.batch import MAX_BATCH_ITEMS
from app.geodata.catalogue import (
    BATCH_FORMS,
    TOOL_SPECS,
    arguments_schema,
    call_description,
    spec_for,
)
from app.geodata.query import COMPACT_PARAMETERS
from app.kit.config import Settings
from app.kit.errors import ERROR_ENVELOPE_SCHEMA
from app.tiles.signing import TILES_PATH
from app.tool_calls.images import IMAGES_PATH
from app.v1 import examples
from app.v1.headers import CACHEABLE, CREDIT_HEADERS, HEADERS
from app.v1.jobs_openapi import job_paths, job_schemas
from app.v1.maps_openapi import image_operation, tile_operation
from app.v1.routes import ROUTES, V1Route
from app.v1.versions import CURRENT, HEADER, describe_versions

REF = "#/components/schemas/{model}"
ERROR_STATUSES = {
    400: "Invalid arguments (INVALID_ARGUMENT); the message names the argument. Or an "
    "API-Version that is not a version of this API (UNKNOWN_API_VERSION, with `versions`)",
    401: "No API key, or a malformed, unknown or revoked one (UNAUTHENTICATED)",
    402: "The month's credits are used up: the free plan's quota or the account's own cap "
    "(QUOTA_EXCEEDED, with quota, used, period, resetsAt)",
    403: "The key lacks the read:data scope (FORBIDDEN)",
    410: "The pinned API-Version is past its sunset (API_VERSION_SUNSET): pin a version in "
    "`versions` (`current` is the newest)",
    404: "Nothing there (NOT_FOUND): no such ZIP code, no place matches, nothing in range",
    414: "The URL is longer than GEOSVC_HTTP_MAX_URL_BYTES (URI_TOO_LONG): send long "
    "arguments (a polygon, many items) in a POST batch body",
    422: "This deployment does not cover the request at all (UNSUPPORTED)",
    429: "Over the key's or account's rate, or the account's calls in progress "
    "(RATE_LIMITED): wait Retry-After",
    503: "A backing service or the upstream provider is briefly down (UNAVAILABLE, "
    "UPSTREAM_UNAVAILABLE): wait Retry-After",
    504: "No worker answered within the deadline (DEADLINE_EXCEEDED)",
}
BATCHES = ", ".join(f"`{TOOL_SPECS[tool].http_path.removeprefix('/v1/')}`" for tool in BATCH_FORMS)
DESCRIPTION = f"""The tools of the MCP server as plain HTTP: the same catalogue, the same
answers (`structuredContent` of the tools), the same limits and credits.

**Authentication**: `Authorization: Bearer svc_live_ak_<keyId>_<secret>`, a key from the
dashboard. Never in the URL (such a request is refused).

**Credits**: 1 per call that returns data; an error costs nothing. Batches: 1 per item
with data.

**Errors**: `{{"error": {{"code", "message", ...}}}}` with the status below. QUOTA_EXCEEDED
is 402, not 429: waiting a moment does not help (the credits come back next month, or
when the account's cap is raised), and HTTP clients retry a 429 by themselves.

**Headers** on every data answer: `RateLimit-Policy` and `RateLimit`,
`Credits-Remaining`, what the call cost and the month's credits (`Credits-Charged`,
`Credits-Used`, `Credits-Quota`, `Credits-Period`, `Credits-State`, `Credits-Reset`),
`X-Request-ID`, `{HEADER}`; population, income, geocode and reverse-geocode
answers also `Cache-Control: {CACHEABLE}` and an `ETag` (they change only with a new data
vintage; a conditional request still runs and costs its credit).

**Batches** (`POST /v1/<tool>/batch` for {BATCHES}): up to {MAX_BATCH_ITEMS} items, each
a call's arguments. `results[i]` answers item i with the status, result or error it would
have had alone (an item that is not a valid call: 400 INVALID_ARGUMENT in its place; only
a body that is not `{{"items": [<object>, ...]}}` of 1 to {MAX_BATCH_ITEMS} is refused
whole). Items are admitted in order, each taking a rate token and a credit: past the rate
or the month's credits, the rest are answered RATE_LIMITED or QUOTA_EXCEEDED and cost
nothing. The batch is 200 whatever its items got.

**Versions**: every answer under /v1 names the dated version it follows in `{HEADER}`;
send `{HEADER}: <date>` to pin one (without it, the current one). Breaking changes come
only with a new date; a deprecated version's answers carry `Deprecation` and `Sunset`
headers; an unknown version is 400 UNKNOWN_API_VERSION, one past its sunset 410
API_VERSION_SUNSET, both listing the versions served. {describe_versions()}
"""


def openapi_document(settings: Settings) -> dict[str, Any]:
    schemas = _component_schemas()
    paths: dict[str, Any] = {}
    for route in ROUTES:
        paths[route.path] = {route.method.lower(): _operation(route, settings)}
    paths[IMAGES_PATH + "/{image_id}"] = {"get": image_operation()}
    paths.update(job_paths(settings))
    schemas.update(job_schemas(settings))
    paths[TILES_PATH + "/{z}/{x}/{y}.png"] = {"get": tile_operation()}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Geospatial Data Service: HTTP data API",
            "version": CURRENT.name,
            "description": DESCRIPTION,
        },
        "servers": [{"url": settings.base_url.rstrip("/")}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "svc_live_ak_<keyId>_<secret>",
                    "description": "An API key from the dashboard's API keys page",
                }
            },
            "schemas": schemas,
            "headers": {name: deepcopy(header) for name, header in HEADERS.items()},
            "responses": {str(status): _error_response(status) for status in ERROR_STATUSES},
        },
    }


def _component_schemas() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Any]] = []
    for route in ROUTES:
        spec = spec_for(route.tool)
        models.append((spec.result_model, "serialization"))
        if route.kind == "batch":
            models += [
                (spec.args_model, "validation"),
                (BATCH_FORMS[route.tool].result_model, "serialization"),
            ]
    _, top = models_json_schema(models, by_alias=True, ref_template=REF)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    schemas["Error"] = deepcopy(ERROR_ENVELOPE_SCHEMA)
    static = schemas["StaticMapResult"]
    schemas["StaticMapJson"] = {
        **deepcopy(static),
        "title": "StaticMapJson",
        "properties": {
            **static["properties"],
            "pngBase64": {"type": "string", "description": "The PNG image, base64"},
        },
        "required": [*static.get("required", []), "pngBase64"],
    }
    return schemas


def _schema_name(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


# What a query parameter's text must look like where the argument model says more than its
# JSON schema can (a ZIP code also arrives as a JSON number over MCP).
PATTERNS = {"postal_code": r"^\s*[0-9]{5}(?:[- ]?[0-9]{4})?\s*$"}


def _parameters(route: V1Route, settings: Settings) -> list[dict[str, Any]]:
    spec = spec_for(route.tool)
    schema = arguments_schema(spec, settings)
    required = set(schema.get("required", []))
    example = examples.ARGUMENTS[route.tool]
    parameters = []
    for name, prop in schema["properties"].items():
        if name in COMPACT_PARAMETERS:
            parameter = {"name": name, "in": "query", **deepcopy(COMPACT_PARAMETERS[name])}
        else:
            options = [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]
            value = {k: v for k, v in options[0].items() if k not in ("title", "description")}
            if "default" in prop and prop["default"] is not None:
                value["default"] = prop["default"]
            if name in PATTERNS:
                value["pattern"] = PATTERNS[name]
            parameter = {
                "name": name,
                "in": "query",
                "description": prop.get("description", ""),
                "schema": value,
            }
        parameter["required"] = name in required
        if name in example:
            parameter["example"] = example[name]
        parameters.append(parameter)
    return parameters


def _data_headers(route: V1Route) -> dict[str, Any]:
    names = ["RateLimit-Policy", "RateLimit", "Credits-Remaining", *CREDIT_HEADERS]
    names += ["X-Request-ID", "API-Version", "Deprecation", "Sunset", "Cache-Control"]
    if route.cacheable:
        names.append("ETag")
    if route.kind == "image":
        names.append("Map-Warnings")
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _operation(route: V1Route, settings: Settings) -> dict[str, Any]:
    spec = spec_for(route.tool)
    tag = "Batches" if route.kind == "batch" else "Tools"
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "tags": [tag],
        "summary": f"{spec.title} (batch)" if route.kind == "batch" else spec.title,
    }
    statuses = [400, 401, 403, 410, 414, 503, 504]
    if route.kind == "batch":
        form = BATCH_FORMS[route.tool]
        operation["description"] = (
            f"Up to {MAX_BATCH_ITEMS} `{route.tool}` calls; `results[i]` answers `items[i]` "
            "as the call alone would have (an invalid item: 400 in its place). 1 credit per "
            "item with data."
        )
        operation["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["items"],
                        "additionalProperties": False,
                        "properties": {
                            "items": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": MAX_BATCH_ITEMS,
                                # any object is answered in its place: as
                                # the call when it is one, else INVALID_ARGUMENT
                                "items": {
                                    "anyOf": [
                                        _schema_name(spec.args_model),
                                        {
                                            "type": "object",
                                            "description": "Not a valid call: answered "
                                            "INVALID_ARGUMENT (400) in its place",
                                        },
                                    ]
                                },
                            }
                        },
                    },
                    "example": examples.BATCH_BODIES[route.tool],
                }
            },
        }
        ok = {
            "description": "One answer per item",
            "headers": _data_headers(route),
            "content": {
                "application/json": {
                    "schema": _schema_name(form.result_model),
                    "example": examples.BATCH_RESULTS[route.tool],
                }
            },
        }
    else:
        operation["description"] = call_description(spec, settings)
        operation["parameters"] = _parameters(route, settings)
        # 422: UNSUPPORTED, what a deployment does not cover (an area offline, a landmark)
        statuses += [402, 404, 422, 429]
        content: dict[str, Any] = {
            "application/json": {
                "schema": _schema_name(spec.result_model),
                "example": examples.RESULTS[route.tool],
            }
        }
        if route.kind == "image":
            content = {
                "image/png": {"schema": {"type": "string", "contentMediaType": "image/png"}},
                "application/json": {
                    "schema": {"$ref": REF.format(model="StaticMapJson")},
                    "example": examples.RESULTS[route.tool],
                },
            }
            operation["description"] += (
                " Answers the PNG image, or, with `Accept: application/json`, the result "
                "with the image in base64 (`pngBase64`)."
            )
        ok = {
            "description": "The tool's answer",
            "headers": _data_headers(route),
            "content": content,
        }
    responses: dict[str, Any] = {"200": ok}
    if route.cacheable:
        responses["304"] = {
            "description": "Not modified (If-None-Match named this answer's ETag)",
            "headers": _data_headers(route),
        }
    for status in sorted(statuses):
        responses[str(status)] = {"$ref": f"#/components/responses/{status}"}
    operation["responses"] = responses
    return operation


def _error_response(status: int) -> dict[str, Any]:
    headers: dict[str, Any] = {
        name: {"$ref": f"#/components/headers/{name}"} for name in ("X-Request-ID", "API-Version")
    }
    if status == 401:
        headers["WWW-Authenticate"] = {"$ref": "#/components/headers/WWW-Authenticate"}
    if status in (429, 503):
        headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
    if status in (402, 429):
        headers["RateLimit-Policy"] = {"$ref": "#/components/headers/RateLimit-Policy"}
        headers["RateLimit"] = {"$ref": "#/components/headers/RateLimit"}
    return {
        "description": ERROR_STATUSES[status],
        "headers": headers,
        "content": {
            "application/json": {
                "schema": {"$ref": REF.format(model="Error")},
                "example": {"error": examples.ERRORS[status]},
            }
        },
    }
