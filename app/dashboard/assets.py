"""The dashboard's static files (stylesheet, script, favicon), served from memory.

A fixed list, read once: no path from the URL ever reaches the file system. Links carry
a content hash (`?v=`), so browsers may keep a file for a year and still see a new one
after a deploy. Scripts and styles live in these files, never inline, so a strict
`script-src 'self'` / `style-src 'self'` policy holds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

from app.kit.errors import NotFound

STATIC_DIR = Path(__file__).parent / "static"
STATIC_PREFIX = "/dashboard/static/"
_MEDIA_TYPES = {
    "dashboard.css": "text/css; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
_FILES = {name: (STATIC_DIR / name).read_bytes() for name in _MEDIA_TYPES}
_VERSIONS = {name: hashlib.sha256(body).hexdigest()[:12] for name, body in _FILES.items()}

router = APIRouter(include_in_schema=False)


def asset_url(name: str) -> str:
    return f"{STATIC_PREFIX}{name}?v={_VERSIONS[name]}"


@router.get(STATIC_PREFIX + "{name}")
def static_file(name: str) -> Response:
    if name not in _FILES:
        raise NotFound("No such file")
    return Response(
        _FILES[name],
        media_type=_MEDIA_TYPES[name],
        headers={
            "Cache-Control": "public, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
        },
    )


@router.get("/favicon.ico")
def favicon() -> RedirectResponse:
    """Browsers ask for /favicon.ico on pages without an icon link (e.g. JSON answers)."""
    return RedirectResponse(asset_url("favicon.svg"), status_code=308)
