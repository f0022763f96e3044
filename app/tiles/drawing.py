"""Drawing a metatile (app.tiles.grid) from the basemap static maps use: the same layers,
names and colours, without markers or credit line. Runs where the basemap is loaded,
a tools worker (workers/tiles.py)."""

from __future__ import annotations

from app.geodata.loading import provider
from app.geodata.rendering import png
from app.geodata.rendering.map_image import draw_map
from app.geodata.rendering.mercator import TILE_SIZE
from app.geodata.rendering.view import View
from app.tiles.grid import Metatile, TileId


def draw_metatile(metatile: Metatile) -> dict[TileId, bytes]:
    """Each tile of `metatile` as a PNG."""
    embedded = provider()
    side = 1 << metatile.z
    pixels = TILE_SIZE * metatile.size
    view = View(
        cx=(metatile.x0 + metatile.size / 2) / side,
        cy=(metatile.y0 + metatile.size / 2) / side,
        zoom=metatile.z,
        width=pixels,
        height=pixels,
    )
    image = draw_map(
        embedded.basemap, view, (), embedded.place_names, None, countries=embedded.countries
    )
    tiles: dict[TileId, bytes] = {}
    for tile in metatile.tiles():
        left, top = (tile.x - metatile.x0) * TILE_SIZE, (tile.y - metatile.y0) * TILE_SIZE
        crop = image.crop((left, top, left + TILE_SIZE, top + TILE_SIZE))
        tiles[tile] = png.encode_rgb(crop)
    return tiles
