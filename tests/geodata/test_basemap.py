"""The basemap's shortcuts give what the plain computation gives: dropping the vertices of
a ring in a run beyond one edge of the image changes no pixel of Pillow's fill or
outline (random rings that wander far outside a small image, drawn whole and reduced),
and the places in view come from the grid or the most populous first exactly as from a
scan of every place."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw

from app.geodata.providers.embedded import EmbeddedProvider
from app.geodata.rendering.basemap import without_off_view_runs
from app.geodata.rendering.view import View
from app.geodata.service import provider


def random_ring(rng: random.Random, width: int, height: int) -> npt.NDArray[np.int64]:
    """A random walk that leaves the image on every side and comes back to pixels it has
    visited, with repeated points removed."""
    x, y = rng.randint(0, width), rng.randint(0, height)
    points: list[tuple[int, int]] = []
    for _ in range(rng.randint(3, 80)):
        if points and rng.random() < 0.1:
            x, y = rng.choice(points)
        else:
            x += rng.randint(-2 * width, 2 * width) // rng.choice([1, 4, 16])
            y += rng.randint(-2 * height, 2 * height) // rng.choice([1, 4, 16])
        points.append((x, y))
    if rng.random() < 0.5:
        points.append(points[0])  # closed, as the basemap's rings are
    ring = np.asarray(points, dtype=np.int64)
    keep = np.ones(len(ring), dtype=bool)
    keep[1:] = np.any(ring[1:] != ring[:-1], axis=1)
    return ring[keep]


def drawn(rings: list[npt.NDArray[np.int64]], width: int, height: int) -> npt.NDArray[np.uint8]:
    image = Image.new("RGB", (width, height), (0, 0, 255))
    draw = ImageDraw.Draw(image)
    for ring in rings:
        if len(ring) < 3:  # the renderer draws no such ring
            continue
        flat = ring.ravel().tolist()
        draw.polygon(flat, fill=(200, 200, 200), outline=(90, 0, 90))
        draw.line(flat + flat[:2], fill=(0, 160, 0), width=1)
    return np.asarray(image)


@pytest.mark.parametrize("seed", range(200))
def test_reduced_rings_draw_the_same_pixels(seed: int) -> None:
    rng = random.Random(seed)
    width, height = rng.randint(8, 90), rng.randint(8, 90)
    rings = [random_ring(rng, width, height) for _ in range(25)]
    counts = np.asarray([len(r) for r in rings], dtype=np.int64)
    points, reduced_counts = without_off_view_runs(np.concatenate(rings), counts, width, height)
    reduced = np.split(points, np.cumsum(reduced_counts)[:-1])
    assert reduced_counts.sum() < counts.sum()  # something went
    for before, after in zip(rings, reduced, strict=True):
        assert np.array_equal(drawn([before], width, height), drawn([after], width, height))


@pytest.fixture(scope="module")
def embedded(geodata_dir: Path) -> EmbeddedProvider:
    return provider()


def test_places_in_view_are_the_first_of_a_scan_of_every_place(
    embedded: EmbeddedProvider,
) -> None:
    basemap = embedded.basemap
    rng = random.Random(26)
    for _ in range(120):  # each view scans every place: 300 took a tenth of the tier
        view = View(
            cx=rng.uniform(-0.2, 1.2),
            cy=rng.uniform(0.0, 1.0),
            zoom=rng.randint(0, 12),
            width=rng.choice([64, 600, 1280]),
            height=rng.choice([64, 400, 1280]),
        )
        x0, y0, x1, y1 = view.world_bounds()
        for shift in range(int(np.floor(x0)), int(np.floor(x1)) + 1):
            x, y = basemap.place_x + shift, basemap.place_y
            scan = np.nonzero((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1))[0]
            for limit in (1, 300, len(scan) + 1):
                found = basemap.places_in_view(view, shift, limit)
                assert found.tolist() == scan[:limit].tolist(), (view, limit)
