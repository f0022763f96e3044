"""The error answers of the HTTP routes, as OpenAPI `responses=`: one declaration per
status, every one with the spec's envelope `{"error": {"code", "message", ...}}`.

Declare with `error_responses(...)`, on a route or a router, the statuses it answers
itself: `@router.delete("/{key_id}", responses=error_responses(403, 404))`. What the
edge may answer around any route (app.http.guards, the error handlers) is `EDGE_ERRORS`,
declared once on the app. tests/contract runs schemathesis to hold the live answers to
these declarations.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from app.kit.errors import ERROR_ENVELOPE_SCHEMA


class ErrorResponse(BaseModel):
    """The error envelope of every failed request, documented with the JSON Schema the
    tools and /v1 use (app.kit.errors.ERROR_ENVELOPE_SCHEMA)."""

    model_config = ConfigDict(extra="allow")

    error: dict[str, Any]

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return deepcopy(ERROR_ENVELOPE_SCHEMA)


_RETRY_AFTER = {
    "description": "Seconds to wait before retrying",
    "schema": {"type": "integer", "minimum": 0},
}

_ERRORS: dict[int, dict[str, Any]] = {
    400: {
        "description": "Bad request: credentials in the URL, or a body that cannot be read",
    },
    401: {
        "description": "Not signed in, session expired, or wrong credentials",
        "headers": {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True}},
    },
    403: {"description": "Forbidden, e.g. a cross-site request refused"},
    404: {"description": "Not found"},
    409: {"description": "Conflict with the current state"},
    413: {"description": "Request body too large"},
    422: {"description": "Invalid argument: the message names the field and the rule"},
    429: {
        "description": "Rate limited: retry after `Retry-After` seconds",
        "headers": {"Retry-After": {**_RETRY_AFTER, "required": True}},
    },
    503: {
        "description": "A backing service or the payment provider is briefly unavailable",
        "headers": {"Retry-After": _RETRY_AFTER},
    },
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` for these error statuses, each with the error envelope."""
    return {status: {**_ERRORS[status], "model": ErrorResponse} for status in statuses}


# What any route may answer without running (app.http.guards: credentials in the URL 400,
# body too large 413, control characters in the path 422), a request validation 422, and
# an outage of Redis, the database or the broker (503).
EDGE_ERRORS = error_responses(400, 413, 422, 503)
