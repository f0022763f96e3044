"""Basemap vectors for static_map: country outlines and US states, pre-projected to Web
Mercator in world units (x, y in [0, 1], y down), with a bounding box per ring so a render
only touches the rings in view."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.sources import CountryShape
from app.geodata.indices.wkb import Ring
from app.geodata.rendering.mercator import lonlat_to_world

LAYER_COUNTRY, LAYER_STATE = 0, 1


def basemap_arrays(
    countries: Mapping[str, CountryShape], states: Mapping[str, list[Ring]]
) -> dict[str, npt.NDArray[Any]]:
    rings: list[tuple[int, Ring]] = []
    for shape in countries.values():
        rings.extend((LAYER_COUNTRY, ring) for ring in shape.rings if len(ring) >= 3)
    for state_rings in states.values():
        rings.extend((LAYER_STATE, ring) for ring in state_rings if len(ring) >= 3)
    return _pack(rings)


def _pack(rings: Iterable[tuple[int, Ring]]) -> dict[str, npt.NDArray[Any]]:
    layers, projected = [], []
    for layer, ring in rings:
        x, y = lonlat_to_world(ring[:, 0], ring[:, 1])
        layers.append(layer)
        projected.append(np.stack([x, y], axis=1))
    offsets = np.zeros(len(projected) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in projected], out=offsets[1:])
    bbox = np.asarray(
        [(p[:, 0].min(), p[:, 1].min(), p[:, 0].max(), p[:, 1].max()) for p in projected],
        dtype=np.float64,
    )
    return {
        "bm_xy": np.concatenate(projected).astype(np.float64),
        "bm_ring_off": offsets,
        "bm_ring_bbox": bbox,
        "bm_ring_layer": np.asarray(layers, dtype=np.uint8),
    }
