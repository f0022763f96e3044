"""The interactive map, an MCP App (the `io.modelcontextprotocol/ui` extension, SEP-1865).

The tools whose answers are places (APP_TOOLS) carry `_meta.ui.resourceUri` naming
MAP_URI; a host that renders Apps reads that resource (`text/html;profile=mcp-app`) and
shows it in a sandboxed iframe, handing it the call's arguments and result over the Apps
bridge. The page is Leaflet (inlined from its npm package, vendored here as the tarball
whose integrity `vendor.json` pins: no script from elsewhere) over our own tiles
(/v1/tiles), through the signed URL template each such result carries in
`_meta["geosvc/tiles"]` (the iframe holds no API key). `_meta.ui.csp` names only the tile
origin. Hosts without Apps ignore all of it and keep the PNG and the text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tarfile
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types

from app.geodata.catalogue import TOOL_SPECS
from app.kit.config import Settings, get_settings
from app.tiles.signing import grant

EXTENSION_ID = "io.modelcontextprotocol/ui"
MAP_URI = "ui://geosvc/map.html"
MIME_TYPE = "text/html;profile=mcp-app"
APP_TOOLS = frozenset(name for name, spec in TOOL_SPECS.items() if spec.answers_places)
TILES_META = "geosvc/tiles"

_HERE = Path(__file__).parent


def _either(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1]


def tool_meta(tool: str) -> dict[str, Any] | None:
    """A tool definition's `_meta`: the app, for the tools that answer places."""
    return {"ui": {"resourceUri": MAP_URI}} if tool in APP_TOOLS else None


def extension_settings() -> dict[str, dict[str, Any]]:
    """What `capabilities.extensions` says of the Apps extension."""
    return {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}


def result_meta(tool: str, account: str, app_meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A result's `_meta` for the app: the signed tile URL template and what the answer
    brought for it (a choropleth's outlines), for APP_TOOLS only (in `_meta`, so a model
    reading the result is not handed a URL or coordinates it has no use for)."""
    if tool not in APP_TOOLS:
        return {}
    tiles = grant(account)
    return (app_meta or {}) | {
        TILES_META: {
            "urlTemplate": tiles.url_template,
            "expiresAt": tiles.expires_at,
            "maxZoom": tiles.max_zoom,
            "attribution": tiles.attribution,
        }
    }


def tile_origin(settings: Settings) -> str:
    parts = urlsplit(settings.base_url)
    return f"{parts.scheme}://{parts.netloc}"


def resource() -> types.Resource:
    return types.Resource(
        uri=MAP_URI,
        name="map",
        title="Interactive map",
        description=f"A pannable, zoomable map of a {_either(sorted(APP_TOOLS))} answer, on the "
        "service's own tiles.",
        mime_type=MIME_TYPE,
    )


def read(settings: Settings | None = None) -> types.ReadResourceResult:
    settings = settings or get_settings()
    csp = {"resourceDomains": [tile_origin(settings)], "connectDomains": []}
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=MAP_URI,
                mime_type=MIME_TYPE,
                text=page(),
                meta={"ui": {"csp": csp, "prefersBorder": True}},
            )
        ]
    )


@lru_cache(maxsize=1)
def page() -> str:
    """The page, Leaflet inlined."""
    leaflet = vendored("leaflet")
    members = leaflet_members()
    return (
        (_HERE / "map.html")
        .read_text(encoding="utf-8")
        .replace("__LEAFLET_VERSION__", leaflet["version"])
        .replace("__APP_VERSION__", version("geosvc"))
        .replace("__LEAFLET_CSS__", members["package/dist/leaflet.css"])
        .replace("__LEAFLET_JS__", members["package/dist/leaflet.js"])
    )


def vendored(package: str) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((_HERE / "vendor.json").read_text())[package]
    return entry


def integrity_of(path: Path) -> str:
    """npm's `integrity` of a tarball: sha512, base64."""
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


@lru_cache(maxsize=1)
def leaflet_members() -> dict[str, str]:
    """Leaflet's files, read from the vendored tarball once its integrity is checked."""
    entry = vendored("leaflet")
    tarball = _HERE / entry["file"]
    if integrity_of(tarball) != entry["integrity"]:
        raise RuntimeError(f"{tarball.name} does not match the integrity in vendor.json")
    with tarfile.open(tarball, "r:gz") as archive:
        members: dict[str, str] = {}
        for name in entry["members"]:
            file = archive.extractfile(name)
            if file is None:
                raise RuntimeError(f"{name} is not a file in {tarball.name}")
            members[name] = file.read().decode("utf-8")
    return members
