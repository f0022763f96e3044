"""The OpenAPI operations of the two map paths that are no tool call: the big map an MCP
`static_map` answer links to, and the basemap tiles (app.tiles). Free of credits, each with
its own budgets."""

from __future__ import annotations

from typing import Any

from app.tiles.grid import TILE_MAX_ZOOM

REF = "#/components/schemas/{model}"


def image_operation() -> dict[str, Any]:
    """The big map an MCP `static_map` answer links to (app.tool_calls.images)."""
    query = [
        {"name": name, "in": "query", "required": False, "schema": schema}
        for name, schema in (
            ("expires", {"type": "string", "pattern": "^[0-9]{1,12}$"}),
            ("signature", {"type": "string", "pattern": "^[0-9a-f]{64}$"}),
        )
    ]
    return {
        "operationId": "static_map_image",
        "tags": ["Tools"],
        "summary": "A linked map image",
        "description": "The PNG of a `static_map` answered over MCP as a `resource_link` "
        "(an image larger than the inline cap). With the link's `expires` and `signature` it "
        "needs no key until it expires; without them, only the key of the account that drew "
        "it. Costs no credit; limited instead to GEOSVC_MAP_LINK_FETCHES_PER_LINK fetches of "
        "one link and GEOSVC_MAP_LINK_FETCHES_PER_IP per GEOSVC_MAP_LINK_FETCH_WINDOW_S from "
        "one client address (429 RATE_LIMITED over either). No answer may be stored by a "
        "cache (`Cache-Control: private, no-store`).",
        "security": [{"bearer": []}, {}],
        "parameters": [
            {
                "name": "image_id",
                "in": "path",
                "required": True,
                "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
            },
            *query,
        ],
        "responses": {
            "200": {"description": "The PNG", "content": {"image/png": {}}},
            "401": {"$ref": "#/components/responses/401"},
            "404": {"$ref": "#/components/responses/404"},
            "422": {
                "description": "The path holds control characters (INVALID_ARGUMENT)",
                "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
            },
            "429": {
                "description": "Over the link's or the client address's fetches (RATE_LIMITED)",
                "headers": {"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
                "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
            },
        },
    }


def tile_operation() -> dict[str, Any]:
    """A basemap tile (app.tiles): docs/HTTP_API.md, "Map tiles"."""
    number = {"type": "string", "pattern": "^[0-9]{1,7}$"}
    path = [{"name": name, "in": "path", "required": True, "schema": number} for name in "zxy"]
    query = [
        {"name": name, "in": "query", "required": False, "schema": schema}
        for name, schema in (
            ("account", {"type": "string", "pattern": "^usr_[A-Za-z0-9]{1,64}$"}),
            ("expires", {"type": "string", "pattern": "^[0-9]{1,12}$"}),
            ("signature", {"type": "string", "pattern": "^[0-9a-f]{64}$"}),
        )
    ]
    error = {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}
    return {
        "operationId": "map_tile",
        "tags": ["Tools"],
        "summary": "A map tile",
        "description": "A 256x256 Web Mercator PNG of the static maps' basemap (coast, lakes, "
        f"rivers, borders, place names), zoom 0 to {TILE_MAX_ZOOM}, for any XYZ map client. "
        "With a key, or with the `account`, `expires` and `signature` of the URL template a "
        'map call\'s MCP result carries in `_meta["geosvc/tiles"]` (no key needed until it '
        "expires). Costs no credit; limited to GEOSVC_TILE_FETCHES_PER_ACCOUNT per account and "
        "GEOSVC_TILE_FETCHES_PER_IP per client address per GEOSVC_TILE_FETCH_WINDOW_S (429 "
        "RATE_LIMITED over either). `Cache-Control: public` and an `ETag` (If-None-Match: 304).",
        "security": [{"bearer": []}, {}],
        "parameters": [*path, *query],
        "responses": {
            "200": {"description": "The PNG", "content": {"image/png": {}}},
            "304": {"description": "Not modified (If-None-Match)"},
            "400": {
                "description": "Outside the world, or a malformed signed URL (INVALID_ARGUMENT)",
                "content": error,
            },
            "401": {"$ref": "#/components/responses/401"},
            "403": {"description": "A bad or expired signature (FORBIDDEN)", "content": error},
            "404": {"description": f"Past zoom {TILE_MAX_ZOOM} (NOT_FOUND)", "content": error},
            "422": {
                "description": "The path holds control characters (INVALID_ARGUMENT)",
                "content": error,
            },
            "429": {
                "description": "Over the account's or the client address's tiles (RATE_LIMITED)",
                "headers": {"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
                "content": error,
            },
            "503": {"$ref": "#/components/responses/503"},
        },
    }
