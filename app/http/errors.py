"""AppError and framework errors as HTTP responses: `{"error": {"code", "message", ...}}`.

Installed once on the app (`install_error_handlers`); pure ASGI guards that answer before
the app runs (bearer auth, cross-site refusal) send the same body with `send_error`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisClusterException, RedisError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import Send

from app.kit.errors import AppError, ServiceUnavailable, unavailable_for
from app.kit.validation import describe_errors

logger = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHENTICATED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}


# The HTTP data API (/v1) answers bad input 400, as REST clients expect; the control plane
# keeps its documented 422. Every other code has its AppError's status on both.
PRODUCT_API_PREFIX = "/v1/"
_PRODUCT_API_STATUS = {"INVALID_ARGUMENT": 400, "MALFORMED_JSON": 400}


def product_api_status(exc: AppError) -> int:
    """The status of `exc` on the HTTP data API (and of a batch item's error)."""
    return _PRODUCT_API_STATUS.get(exc.code, exc.status)


def status_for(exc: AppError, path: str) -> int:
    return product_api_status(exc) if path.startswith(PRODUCT_API_PREFIX) else exc.status


def bad_input_status(path: str) -> int:
    """The status of INVALID_ARGUMENT and MALFORMED_JSON on `path`."""
    return 400 if path.startswith(PRODUCT_API_PREFIX) else 422


# FastAPI's message for a body its JSON decoder raised on with something other than a
# JSONDecodeError (bytes that are not UTF-8, an integer of more digits than Python takes)
_UNPARSED_BODY = "There was an error parsing the body"


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


async def send_error(
    send: Send,
    status: int,
    body: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
) -> None:
    """Answer an ASGI request with a JSON error body (for guards outside FastAPI routing)."""
    payload = json.dumps(body).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *(
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (headers or {}).items()
        ),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


def _describe_request_errors(exc: RequestValidationError) -> tuple[str, str]:
    errors = exc.errors()
    if any(error.get("type") == "json_invalid" for error in errors):
        return "MALFORMED_JSON", "Request body is not valid JSON"
    if any(error.get("type") == "model_attributes_type" for error in errors):
        return "INVALID_ARGUMENT", "Request body must be a JSON object"
    # FastAPI locations start with where the value was ("body", "query", ...): drop it.
    located = [{**error, "loc": tuple(error.get("loc") or ())[1:]} for error in errors]
    return "INVALID_ARGUMENT", describe_errors(located)


def headers_of(exc: AppError) -> dict[str, str] | None:
    """The HTTP headers an AppError's answer carries. Retry-After is whole seconds (RFC
    9110), rounded up; the body's `retryAfterSeconds` keeps the fraction."""
    if exc.status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if exc.status == 503 or "retryAfterSeconds" in exc.details:  # e.g. RATE_LIMITED
        wait = float(exc.details.get("retryAfterSeconds", ServiceUnavailable.retry_after_s))
        return {"Retry-After": str(max(1, math.ceil(wait)))}
    return None


_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def _allowed_methods(request: Request) -> str:
    """Every method some route answers on this path. Starlette's 405 names the methods of
    the first route that matched the path only, and FastAPI makes a route per method."""

    def answered(method: str) -> bool:
        scope = {**request.scope, "method": method}
        return any(route.matches(scope)[0] is Match.FULL for route in request.app.router.routes)

    return ", ".join(method for method in _METHODS if answered(method))


def error_response(
    exc: AppError, path: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The answer to `exc` on a request for `path`, with its headers and `headers`."""
    return JSONResponse(
        exc.to_body(), status_for(exc, path), headers={**(headers_of(exc) or {}), **(headers or {})}
    )


def install_error_handlers(app: FastAPI) -> None:
    async def on_app_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, AppError)
        return error_response(exc, request.url.path)

    async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        code, message = _describe_request_errors(exc)
        return JSONResponse(error_body(code, message), bad_input_status(request.url.path))

    async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 400 and exc.detail == _UNPARSED_BODY:
            body = error_body("MALFORMED_JSON", "Request body is not valid JSON")
            return JSONResponse(body, bad_input_status(request.url.path))
        code = _HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ").title()
        headers = exc.headers
        allowed = _allowed_methods(request) if exc.status_code == 405 else ""
        if allowed:
            headers = {**(headers or {}), "Allow": allowed}
        return JSONResponse(error_body(code, message), exc.status_code, headers=headers)

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        unavailable = unavailable_for(exc)
        if unavailable is not None:  # a backing service is down: retryable, never a 500
            logger.warning("%s %s: %s", request.method, request.url.path, exc)
            return JSONResponse(unavailable.to_body(), 503, headers=headers_of(unavailable))
        logger.exception("Unhandled error", exc_info=exc)
        return JSONResponse(error_body("INTERNAL", "Internal error"), 500)

    async def on_backing_service_error(request: Request, exc: Exception) -> JSONResponse:
        """Answered here rather than by the catch-all: Starlette re-raises what reaches
        that one, so the server logs a traceback and drops the client's connection."""
        if unavailable_for(exc) is None:
            raise exc  # e.g. an IntegrityError: a bug, for the catch-all's 500
        return await on_unexpected(request, exc)

    app.add_exception_handler(AppError, on_app_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    for outage in _BACKING_SERVICE_ERRORS:
        app.add_exception_handler(outage, on_backing_service_error)
    app.add_exception_handler(Exception, on_unexpected)


# Whose outages `unavailable_for` recognises (the database's, Redis's, the broker's).
_BACKING_SERVICE_ERRORS: tuple[type[Exception], ...] = (
    DBAPIError,
    PoolTimeout,
    RedisError,
    RedisClusterException,  # not a RedisError: a command whose keys span two slots
    BrokerError,
)
