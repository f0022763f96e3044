"""Which tiles exist and how they are grouped for drawing.

A tile is drawn as part of its metatile, METATILE x METATILE tiles in one image cut
apart: names are placed once for the whole block, so a name crossing a tile's edge is
drawn whole on both tiles (a tile drawn alone would drop every name near its edges), and
the neighbours a map asks for next are drawn in the same pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.kit.errors import InvalidArgument, NotFound

# The basemap's detail ends at zoom 12 (GSHHG's full resolution, docs/DATA.md): deeper
# tiles would only magnify it, which a map client does itself (Leaflet's maxNativeZoom).
TILE_MAX_ZOOM = 12
METATILE = 4
# What the drawing looks like: part of every ETag, raised when the renderer's output
# changes, with the index version (a rebuilt basemap changes tiles too).
TILE_STYLE = 1
# The credit a map of tiles shows once (the tiles carry none); the static maps' own
# (app.geodata.providers.embedded.attribution.MAP_ATTRIBUTION: tests hold them equal).
TILE_ATTRIBUTION = "GeoNames CC BY 4.0 | Natural Earth | US Census TIGER | GSHHG LGPL"


@dataclass(frozen=True)
class TileId:
    z: int
    x: int
    y: int

    @property
    def path(self) -> str:
        return f"{self.z}/{self.x}/{self.y}"


@dataclass(frozen=True)
class Metatile:
    z: int
    x0: int  # its first tile's x and y
    y0: int
    size: int  # tiles per side

    def tiles(self) -> list[TileId]:
        return [
            TileId(self.z, self.x0 + dx, self.y0 + dy)
            for dy in range(self.size)
            for dx in range(self.size)
        ]


def tile_id(z: int, x: int, y: int) -> TileId:
    """The tile, or InvalidArgument for a place outside the world at that zoom, NotFound
    for a zoom past the data."""
    if z < 0:
        raise InvalidArgument("z must be 0 or more.", field="z")
    if z > TILE_MAX_ZOOM:
        raise NotFound(
            f"No tiles past zoom {TILE_MAX_ZOOM}: the basemap's detail ends there "
            f"(ask the map client to magnify zoom {TILE_MAX_ZOOM}).",
            maxZoom=TILE_MAX_ZOOM,
        )
    side = 1 << z
    for name, value in (("x", x), ("y", y)):
        if not 0 <= value < side:
            raise InvalidArgument(
                f"{name} must be from 0 to {side - 1} at zoom {z}: that tile is outside the world.",
                field=name,
            )
    return TileId(z, x, y)


def metatile_of(tile: TileId) -> Metatile:
    size = min(METATILE, 1 << tile.z)
    return Metatile(tile.z, tile.x - tile.x % size, tile.y - tile.y % size, size)
