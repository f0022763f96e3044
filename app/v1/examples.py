"""Example requests and answers of the HTTP data API, for its OpenAPI document: real
answers of the embedded datasets; a test checks each against its schema."""

from __future__ import annotations

from typing import Any

from app.geodata.catalogue import TOOL_SPECS

# Each tool's example call and answer, from its catalogue entry (`ToolSpec.example`).
ARGUMENTS: dict[str, dict[str, Any]] = {n: s.example.arguments for n, s in TOOL_SPECS.items()}
RESULTS: dict[str, dict[str, Any]] = {n: s.example.result for n, s in TOOL_SPECS.items()}

# An item that is no ZIP code of the US: a demographic batch's item error.
_UNKNOWN_ZIP = {
    "status": 404,
    "error": {"code": "NOT_FOUND", "message": "ZIP code 00000 is not a known US ZIP code"},
}
_BAD_ZIP = {
    "status": 400,
    "error": {
        "code": "INVALID_ARGUMENT",
        "message": 'postal_code: must be a US ZIP code of 5 digits; did you mean "02139"? '
        "(leading zeros may have been lost)",
    },
}
_DEMOGRAPHIC = ("get_population", "get_average_income", "get_demographics")

BATCH_BODIES: dict[str, dict[str, Any]] = {
    **{
        tool: {"items": [ARGUMENTS[tool], {"postal_code": "00000"}, {"postal_code": "2139"}]}
        for tool in _DEMOGRAPHIC
    },
    "geocode": {"items": [{"query": "Austin, TX", "limit": 1}, {"query": "zzzzqqqq"}]},
    "reverse_geocode": {"items": [{"lat": 40.7484, "lon": -73.9857}, {"lat": 0, "lon": -140}]},
}

BATCH_RESULTS: dict[str, dict[str, Any]] = {
    **{
        tool: {
            "results": [{"status": 200, "result": RESULTS[tool]}, _UNKNOWN_ZIP, _BAD_ZIP],
            "credits": 1,
        }
        for tool in _DEMOGRAPHIC
    },
    "geocode": {
        "results": [
            {"status": 200, "result": RESULTS["geocode"]},
            {
                "status": 404,
                "error": {
                    "code": "NOT_FOUND",
                    "message": "No city, region, country, postal code or airport "
                    "matches 'zzzzqqqq' (landmarks, natural features and street addresses "
                    "need the upstream geocoder).",
                },
            },
        ],
        "credits": 1,
    },
    "reverse_geocode": {
        "results": [
            {"status": 200, "result": RESULTS["reverse_geocode"]},
            {
                "status": 404,
                "error": {
                    "code": "NOT_FOUND",
                    "message": "No place within 300 km of (0.0, -140.0) (open sea or "
                    "uninhabited land)",
                },
            },
        ],
        "credits": 1,
    },
}

ERRORS: dict[int, dict[str, Any]] = {
    400: {"code": "INVALID_ARGUMENT", "message": "limit: must be at most 10 (got 50)"},
    401: {
        "code": "UNAUTHENTICATED",
        "message": "Missing API key: send the header `Authorization: Bearer svc_live_ak_...`",
    },
    402: {
        "code": "QUOTA_EXCEEDED",
        "message": "The free plan's 1000 monthly credits for 2026-11 are used up; credits "
        "reset at 2026-12-01T00:00:00.000Z. The standard plan has no hard cap.",
        "quota": 1000,
        "used": 1000,
        "period": "2026-11",
        "resetsAt": "2026-12-01T00:00:00.000Z",
    },
    403: {"code": "FORBIDDEN", "message": "This API key lacks the read:data scope"},
    404: {
        "code": "NOT_FOUND",
        "message": "No city, region, country, postal code or airport "
        "matches 'zzzzqqqq' (landmarks, natural features and street addresses "
        "need the upstream geocoder).",
    },
    422: {
        "code": "UNSUPPORTED",
        "message": "category 'pharmacy' is not covered by this deployment (it needs the "
        "upstream place search, which is not enabled here); it answers: city, airport, "
        "postal_code",
    },
    429: {
        "code": "RATE_LIMITED",
        "message": "Rate limit: this API key may make 5 calls per second (bursts of 10) on "
        "the free plan; retry in 0.2 s. No credit was charged.",
        "limit": "key_rate",
        "retryable": True,
        "retryAfterSeconds": 0.2,
    },
    503: {
        "code": "UNAVAILABLE",
        "message": "The service is briefly unavailable; no credit was charged. Retry shortly.",
        "retryable": True,
        "retryAfterSeconds": 2,
    },
    504: {
        "code": "DEADLINE_EXCEEDED",
        "message": "The call did not finish in time; no credit was charged. Retry shortly.",
    },
}
