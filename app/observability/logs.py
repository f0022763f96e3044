"""JSON logs, one line per event, carrying the request id and the call id.

The ids live in context variables: the api's `RequestIdMiddleware` binds the request id
(the caller's `X-Request-ID` when it is sane, else a new one, echoed in the response);
a tool call binds its call id (which is also its Celery task id); the worker binds both
from the task (`celery_hooks`). Every log record made meanwhile carries them, uvicorn's
access line included. Secrets never go in: nothing here logs headers or arguments.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.kit.credentials import REDACTED_PARAMS, SECRET_PREFIXES

if TYPE_CHECKING:  # types only: a worker imports this module and no web framework
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "x-request-id"
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
call_id_var: ContextVar[str | None] = ContextVar("call_id", default=None)

# LogRecord's own attributes; anything else on a record came in through `extra=`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's ANSI-coloured copy of the message
}


# A credential in a logged URL (uvicorn's access line; CredentialsInUrl refuses such
# requests, but the line is written anyway) or an API key, OAuth token or code anywhere
# in a message.
_URL_CREDENTIAL = re.compile(
    r"(?i)([?&](?:" + "|".join(map(re.escape, sorted(REDACTED_PARAMS))) + r")=)[^&\s\"]*"
)
_SECRET = re.compile("(" + "|".join(map(re.escape, SECRET_PREFIXES)) + r")[A-Za-z0-9_]+")


def redact(text: str) -> str:
    # Every log line passes here: the substitutions run only where one could match.
    if "=" in text:
        text = _URL_CREDENTIAL.sub(r"\1[redacted]", text)
    if any(prefix in text for prefix in SECRET_PREFIXES):
        text = _SECRET.sub(r"\1[redacted]", text)
    return text


class RedactCredentials(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def new_request_id() -> str:
    return "req_" + secrets.token_hex(8)


def sane_request_id(value: str | None) -> str | None:
    """The caller's id if it is 1-128 characters of [A-Za-z0-9._:-], else None."""
    if value and _SANE_REQUEST_ID.fullmatch(value):
        return value
    return None


def bind_call_id(call_id: str) -> None:
    call_id_var.set(call_id)


def bind_request_id(request_id: str | None) -> None:
    if request_id:
        request_id_var.set(request_id)


def bind_request_of(request: object) -> None:
    """Bind the request id the middleware put on a Starlette request's scope (for code
    that runs in another task than the request, e.g. the MCP session manager's)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        bind_request_id(scope.get("state", {}).get("request_id"))


def log_event(logger: logging.Logger, event: str, message: str, **fields: Any) -> None:
    """One info line for an event; `fields` become JSON keys."""
    if logger.isEnabledFor(logging.INFO):
        logger.info(message, extra={"event": event, **fields})


def current_request_id() -> str | None:
    return request_id_var.get()


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id, call_id = request_id_var.get(), call_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        if call_id:
            entry["call_id"] = call_id
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """For people at a terminal (`geosvc dev`): the ids trail the message."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        ids = [
            f"{k}={v}"
            for k, v in (("request_id", request_id_var.get()), ("call_id", call_id_var.get()))
            if v
        ]
        return f"{line} [{' '.join(ids)}]" if ids else line


def formatter_for(log_format: str) -> logging.Formatter:
    return JsonFormatter() if log_format == "json" else TextFormatter()


def configure_logging(log_format: str = "json", level: str = "INFO") -> None:
    """One stderr handler on the root logger; uvicorn's and Celery's loggers propagate to it.

    Idempotent (the api factory and the worker may both call it)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter_for(log_format))
    handler.set_name("geosvc")
    handler.addFilter(RedactCredentials())
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if h.get_name() != "geosvc"] + [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers = []
        uvicorn_logger.propagate = True
    # The MCP SDK logs a line at INFO for every stateless request ("Terminating session:
    # None"): half of the api's log lines, and a record, a JSON line and a write per call.
    # Its warnings and errors still show; GEOSVC_LOG_LEVEL=DEBUG shows everything.
    sdk_level = logging.DEBUG if root.level <= logging.DEBUG else logging.WARNING
    logging.getLogger("mcp").setLevel(sdk_level)


class RequestIdMiddleware:
    """Pure ASGI (no per-request task or body buffering): binds the request id, puts it on
    `scope["state"]`, and echoes it in `X-Request-ID`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for name, value in scope.get("headers", ()):
            if name == b"x-request-id":
                given = sane_request_id(value.decode("latin-1"))
                break
        request_id = given or new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        token = request_id_var.set(request_id)
        header = (b"x-request-id", request_id.encode("ascii"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id_var.reset(token)
