"""One error hierarchy for every surface.

Services raise `AppError` subclasses; the FastAPI handlers in `app.main` render them as
`{"error": {"code", "message", ...details}}` with the subclass's HTTP status, and the MCP
layer renders the same body as an `isError` tool result.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

logger = logging.getLogger(__name__)


class AppError(Exception):
    code: ClassVar[str] = "INTERNAL"
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, **details: Any) -> None:
        self.message = message or self.default_message
        self.details = details
        super().__init__(self.message)

    def to_body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


class InvalidArgument(AppError):
    code = "INVALID_ARGUMENT"
    status = 422
    default_message = "Invalid argument"


class Unauthenticated(AppError):
    code = "UNAUTHENTICATED"
    status = 401
    default_message = "Authentication required"


class Forbidden(AppError):
    code = "FORBIDDEN"
    status = 403
    default_message = "Forbidden"


class NotFound(AppError):
    code = "NOT_FOUND"
    status = 404
    default_message = "Not found"


class Conflict(AppError):
    code = "CONFLICT"
    status = 409
    default_message = "Conflict"


class KeyLimitReached(AppError):
    """The account already has the maximum number of active API keys."""

    code = "KEY_LIMIT_REACHED"
    status = 409
    default_message = "Active API key limit reached; revoke a key first"


class PaymentProviderUnavailable(AppError):
    code = "PAYMENT_PROVIDER_UNAVAILABLE"
    status = 503
    default_message = "The payment provider is not available"


class LimitExceeded(AppError):
    code = "LIMIT_EXCEEDED"
    status = 422
    default_message = "Limit exceeded"


class RateLimited(AppError):
    code = "RATE_LIMITED"
    status = 429
    default_message = "Too many requests"


class QuotaExceeded(AppError):
    """Free plan at its monthly cap; details carry quota, used, period, resetsAt."""

    code = "QUOTA_EXCEEDED"
    status = 429
    default_message = "Monthly credit quota exhausted"


class UpstreamUnavailable(AppError):
    code = "UPSTREAM_UNAVAILABLE"
    status = 503
    default_message = "Upstream data provider unavailable"


class DeadlineExceeded(AppError):
    """A tool call was not answered in time (workers busy or down); it costs nothing."""

    code = "DEADLINE_EXCEEDED"
    status = 504
    default_message = "The call did not finish in time; no credit was charged. Retry shortly."


class Internal(AppError):
    pass


def _subclasses(cls: type[AppError]) -> list[type[AppError]]:
    return [cls, *(sub for direct in cls.__subclasses__() for sub in _subclasses(direct))]


def error_from_body(error: Mapping[str, Any]) -> AppError:
    """The AppError of an `{"code", "message", ...}` object (e.g. from a worker); unknown
    codes become INTERNAL."""
    details = {k: v for k, v in error.items() if k not in ("code", "message")}
    for cls in _subclasses(AppError):
        if cls.code == error.get("code") and cls is not AppError:
            return cls(str(error.get("message") or cls.default_message), **details)
    return Internal()


# --- HTTP mapping: every error of every endpoint has the same body ---------------------

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


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers=headers)


def _describe_validation(exc: RequestValidationError) -> tuple[str, str]:
    errors = exc.errors()
    if any(error.get("type") == "json_invalid" for error in errors):
        return "MALFORMED_JSON", "Request body is not valid JSON"
    if any(error.get("type") == "model_attributes_type" for error in errors):
        return "INVALID_ARGUMENT", "Request body must be a JSON object"
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "INVALID_ARGUMENT", "; ".join(parts)


def install_http_error_handlers(app: FastAPI) -> None:
    async def on_app_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, AppError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(exc.to_body(), exc.status, headers=headers)

    async def on_validation_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        code, message = _describe_validation(exc)
        return error_response(422, code, message)

    async def on_http_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ").title()
        return error_response(exc.status_code, code, message, headers=exc.headers)

    async def on_unexpected(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("Unhandled error", exc_info=exc)
        return error_response(500, "INTERNAL", "Internal error")

    app.add_exception_handler(AppError, on_app_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)
