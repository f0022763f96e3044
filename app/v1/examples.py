"""Example requests and answers of the HTTP data API, for its OpenAPI document: real
answers of the embedded datasets; a test checks each against its schema."""

from __future__ import annotations

from typing import Any

from app.geodata.catalogue import TOOL_SPECS

# Each tool's example call and answer, from its catalogue entry (`ToolSpec.example`).
ARGUMENTS: dict[str, dict[str, Any]] = {n: s.example.arguments for n, s in TOOL_SPECS.items()}
RESULTS: dict[str, dict[str, Any]] = {n: s.example.result for n, s in TOOL_SPECS.items()}

# Each batch's example: the tool's example call, then the items its example adds, each
# with its outcome (`Example.batch`).
BATCH_BODIES: dict[str, dict[str, Any]] = {
    name: {"items": [spec.example.arguments, *(items for items, _ in spec.example.batch)]}
    for name, spec in TOOL_SPECS.items()
    if spec.example.batch
}
BATCH_RESULTS: dict[str, dict[str, Any]] = {
    name: {
        "results": [
            {"status": 200, "result": spec.example.result},
            *(outcome for _, outcome in spec.example.batch),
        ],
        "credits": 1,
    }
    for name, spec in TOOL_SPECS.items()
    if spec.example.batch
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
    410: {
        "code": "API_VERSION_SUNSET",
        "message": "API-Version 2026-11-24 was retired on 2026-11-27: pin 2026-12-07, the "
        "current version (what changed: /v1/docs); served: 2026-12-07, 2026-11-27",
        "versions": ["2026-12-07", "2026-11-27"],
        "current": "2026-12-07",
    },
    404: {
        "code": "NOT_FOUND",
        "message": "No city, region, country, postal code or airport "
        "matches 'zzzzqqqq' (landmarks, natural features and street addresses "
        "need the upstream geocoder).",
    },
    414: {"code": "URI_TOO_LONG", "message": "URL longer than 8192 bytes"},
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
