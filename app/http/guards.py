"""Edge middlewares (pure ASGI, no per-request task): request limits (body size, control
characters in the path) and the security headers of every response.

Body limit: a declared Content-Length over `GEOSVC_MAX_BODY_BYTES` is answered 413 before
a byte of the body is read; a body without one (chunked) is counted as it streams and
cut off at the limit with the same 413, so no route ever holds more than the limit.

Headers: `X-Content-Type-Options`, `Referrer-Policy` and `X-Frame-Options` on everything;
the Content-Security-Policy on HTML (the dashboard uses only its own static JS/CSS); HSTS
outside development (served over HTTPS there).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.errors import error_body, send_error
from app.kit.config import get_settings
from app.kit.credentials import CREDENTIAL_PARAMS, SECRET_PREFIXES
from app.kit.validation import has_control_characters

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
HSTS = "max-age=31536000; includeSubDomains"
# The routes whose body may be larger than GEOSVC_MAX_BODY_BYTES: a job's rows, POST
# /v1/jobs and the dashboard's upload, up to GEOSVC_JOB_BODY_MAX_BYTES (still refused
# before it is read whole).
JOB_UPLOAD_PATHS = frozenset({"/v1/jobs", "/dashboard/jobs/preview"})
# FastAPI's Swagger UI loads its assets from a CDN: no CSP there (dev only by default).
_NO_CSP_PATHS = ("/docs",)


class BodyTooLarge(Exception):
    pass


def _too_large_body(limit: int) -> dict[str, object]:
    return error_body("PAYLOAD_TOO_LARGE", f"Request body is larger than {limit} bytes")


class RequestLimits:
    def __init__(self, app: ASGIApp, max_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes or get_settings().max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if has_control_characters(scope["path"]):  # e.g. a NUL in a key id: refuse it here
            body = error_body("INVALID_ARGUMENT", "The path must not contain control characters")
            await send_error(send, 422, body)
            return
        limit = self.max_bytes
        if scope["path"] in JOB_UPLOAD_PATHS:  # a job's rows (a CSV of 100,000 addresses)
            limit = max(limit, get_settings().job_body_max_bytes)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await send_error(send, 413, _too_large_body(limit), {"Connection": "close"})
            return
        received = 0
        too_large = False
        answered = False

        async def counted_receive() -> Message:
            nonlocal received, too_large
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    too_large = True
                    raise BodyTooLarge
            return message

        async def answer_too_large() -> None:
            nonlocal answered
            if not answered:
                answered = True
                await send_error(send, 413, _too_large_body(limit), {"Connection": "close"})

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            # The framework may turn the cut-off read into its own error (FastAPI: 400
            # "error parsing the body"): the answer is the 413 instead.
            if too_large:
                await answer_too_large()
                return
            if message["type"] == "http.response.start":
                answered = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except BodyTooLarge:
            await answer_too_large()


CREDENTIALS_IN_URL = (
    "Credentials are not accepted in the URL (URLs end up in logs and browser history): "
    "send the API key in the Authorization header, `Authorization: Bearer <key>`"
)


def has_credentials(query_string: bytes) -> bool:
    if not query_string:
        return False
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    return any(
        name.lower() in CREDENTIAL_PARAMS or any(prefix in value for prefix in SECRET_PREFIXES)
        for name, value in pairs
    )


class CredentialsInUrl:
    """400 for a key (or password, token) in the query string, before anything uses it, so
    nobody comes to rely on it; the access log redacts it (observability.logs)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and has_credentials(scope["query_string"]):
            await send_error(send, 400, error_body("INVALID_ARGUMENT", CREDENTIALS_IN_URL))
            return
        await self.app(scope, receive, send)


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        common = [
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"strict-origin-when-cross-origin"),
            (b"x-frame-options", b"DENY"),
        ]
        if not get_settings().is_development:
            common.append((b"strict-transport-security", HSTS.encode()))
        self.common = common

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp_allowed = not scope["path"].startswith(_NO_CSP_PATHS)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in self.common if k not in present]
                content_type = dict(headers).get(b"content-type", b"")
                # A page may state its own policy (the OAuth consent page names where its
                # form may send the browser); every other page gets the default.
                own_csp = b"content-security-policy" in present
                if csp_allowed and not own_csp and content_type.startswith(b"text/html"):
                    headers.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
