"""Map tiles: 256x256 Web Mercator PNGs of the static maps' basemap at /v1/tiles, for the
interactive map (the MCP App) and any XYZ client (docs/HTTP_API.md, "Map tiles")."""
