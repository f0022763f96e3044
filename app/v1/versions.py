"""The HTTP data API's dated versions (docs/HTTP_API.md, "Versions"; what changed in each:
docs/API_CHANGELOG.md).

Every answer under /v1 says the version it follows (`API-Version`). A client pins one by
sending `API-Version: <date>`; without it, the current one applies. A breaking change
(a field removed or renamed, a status changed) only ever comes with a new date, and a
pinned client keeps the old behaviour until that version's sunset. A deprecated version
is still served, with `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) headers and a
`Link` to the reference page, which lists the versions; past its sunset a version is
refused 410 API_VERSION_SUNSET, and a date that was never a version 400
UNKNOWN_API_VERSION, each saying which versions are served. A pure ASGI middleware, so
the refusals, the guards' errors and every route under /v1 carry the header alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import format_datetime

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.errors import send_error
from app.kit.clock import utcnow

HEADER = "API-Version"
# Where the versions and their changes are described (the reference page, from OpenAPI).
VERSIONS_PAGE = "/v1/docs"


@dataclass(frozen=True)
class ApiVersion:
    name: str  # the date it was released, YYYY-MM-DD
    summary: str
    deprecated: date | None = None  # announced on this day (Deprecation)
    sunset: date | None = None  # refused from this day on (Sunset)

    def retired(self, today: date) -> bool:
        return self.sunset is not None and today >= self.sunset


# Newest first. Only the current version's behaviour is implemented: an older version is
# still served while every change since it is additive for its clients.
VERSIONS: tuple[ApiVersion, ...] = (
    ApiVersion(
        "2026-12-07",
        "Dated versions: the API-Version header, this changelog kept in step with OpenAPI "
        "and tools/list",
    ),
    ApiVersion(
        "2026-11-27",
        "Batches answer an invalid item in its place; population and income no longer "
        "list `country`",
        deprecated=date(2026, 12, 7),
        sunset=date(2027, 6, 1),
    ),
    ApiVersion(
        "2026-11-24",
        "The first /v1: a batch with an invalid item was refused whole",
        deprecated=date(2026, 11, 27),
        sunset=date(2026, 11, 27),
    ),
)
CURRENT = VERSIONS[0]
_BY_NAME = {version.name: version for version in VERSIONS}


def served(today: date) -> list[ApiVersion]:
    return [version for version in VERSIONS if not version.retired(today)]


def _http_date(day: date) -> str:
    return format_datetime(datetime(day.year, day.month, day.day, tzinfo=UTC), usegmt=True)


def _epoch(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def headers_for(version: ApiVersion) -> list[tuple[bytes, bytes]]:
    headers = [(b"api-version", version.name.encode())]
    if version.deprecated is not None:
        headers.append((b"deprecation", f"@{_epoch(version.deprecated)}".encode()))
        link = f'<{VERSIONS_PAGE}>; rel="deprecation"; type="text/html"'
        headers.append((b"link", link.encode()))
    if version.sunset is not None:
        headers.append((b"sunset", _http_date(version.sunset).encode()))
    return headers


def _versions_detail(today: date) -> dict[str, object]:
    return {"versions": [v.name for v in served(today)], "current": CURRENT.name}


def refusal(requested: str, today: date) -> tuple[int, dict[str, object]] | None:
    """(status, body) refusing a pinned version that is unknown or past its sunset."""
    version = _BY_NAME.get(requested)
    names = ", ".join(v.name for v in served(today))
    if version is None:
        message = (
            f"{HEADER} {requested[:40]!r} is not a version of this API; send one of {names} "
            f"(or no {HEADER} header for the current one, {CURRENT.name})"
        )
        code, status = "UNKNOWN_API_VERSION", 400
    elif version.retired(today):
        assert version.sunset is not None
        message = (
            f"{HEADER} {version.name} was retired on {version.sunset.isoformat()}: pin "
            f"{CURRENT.name}, the current version (what changed: {VERSIONS_PAGE}); "
            f"served: {names}"
        )
        code, status = "API_VERSION_SUNSET", 410
    else:
        return None
    return status, _error(code, message, today)


def _error(code: str, message: str, today: date) -> dict[str, object]:
    return {"error": {"code": code, "message": message, **_versions_detail(today)}}


class ApiVersions:
    """Reads the pinned version of a request under /v1 and names it in the answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not (path == "/v1" or path.startswith("/v1/")):
            await self.app(scope, receive, send)
            return
        pinned = [v.decode("latin-1").strip() for k, v in scope["headers"] if k == b"api-version"]
        requested = pinned[0] if pinned else ""
        today = utcnow().date()
        refused = refusal(requested, today) if len(pinned) == 1 and requested else None
        if len(pinned) > 1:
            refused = 400, _error("UNKNOWN_API_VERSION", f"Send {HEADER} once", today)
        if refused is not None:
            status, body = refused
            await send_error(send, status, body, dict(_decoded(headers_for(CURRENT))))
            return
        version = _BY_NAME[requested] if requested else CURRENT
        extra = headers_for(version)

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, named)


def _decoded(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(name.decode(), value.decode()) for name, value in headers]


def describe_versions() -> str:
    """The versions as the OpenAPI document's description (and /v1/docs) says them."""
    lines = []
    for version in VERSIONS:
        if version is CURRENT:
            state = "current"
        else:
            deprecated = version.deprecated.isoformat() if version.deprecated else "-"
            sunset = version.sunset.isoformat() if version.sunset else "not set"
            state = f"deprecated {deprecated}, sunset {sunset}: refused from that day"
        lines.append(f"`{version.name}` ({state}): {version.summary}.")
    return " ".join(lines)
