"""The tile task (queue `tools`: tools workers hold the basemap): one metatile drawn and
cut into its tiles (app.tiles.drawing), answered as base64 PNGs by "z/x/y"."""

from __future__ import annotations

import base64
import time

from app.observability import metrics
from app.queue import celery_app
from app.tiles.drawing import draw_metatile
from app.tiles.grid import Metatile
from app.tiles.service import DRAW_TASK


@celery_app.task(name=DRAW_TASK)
def draw_tiles(z: int, x0: int, y0: int, size: int) -> dict[str, dict[str, str]]:
    started = time.perf_counter()
    tiles = draw_metatile(Metatile(z, x0, y0, size))
    metrics.tile_drawn(time.perf_counter() - started)
    return {"tiles": {tile.path: base64.b64encode(png).decode() for tile, png in tiles.items()}}
