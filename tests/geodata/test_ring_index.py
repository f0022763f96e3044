"""geometry.RingIndex: rings stored flat, found by their boxes, decided by their polygons."""

from __future__ import annotations

import numpy as np

from app.geodata.geometry import RingIndex

# ring 0: a 10 x 10 square; ring 1: a 2 x 2 hole in it; ring 2: a square far east
RINGS = [
    [(0, 0), (10, 0), (10, 10), (0, 10), (0, 0)],
    [(4, 4), (6, 4), (6, 6), (4, 6), (4, 4)],
    [(20, 0), (21, 0), (21, 1), (20, 1), (20, 0)],
]


def index() -> RingIndex:
    xy = np.array([point for ring in RINGS for point in ring], dtype=np.float64)
    offsets = np.cumsum([0] + [len(ring) for ring in RINGS])
    return RingIndex(xy, offsets)


def test_the_rings_that_hold_a_point() -> None:
    rings = index()

    assert rings.containing(1, 1) == [0]
    assert sorted(rings.containing(5, 5)) == [0, 1]  # the caller's even-odd: in the hole
    assert rings.containing(20.5, 0.5) == [2]
    assert rings.containing(15, 5) == []
    assert rings.containing(10, 5) == []  # on the line is not inside


def test_near_and_nearest_measure_to_the_ring_as_a_polygon() -> None:
    rings = index()

    assert rings.within(10.5, 5, 1.0) == [0]
    assert rings.within(10.5, 5, 0.4) == []
    assert rings.nearest(19.5, 0.5, 1.0) == 2
    assert rings.nearest(15, 5, 1.0) is None
    assert rings.nearest(1, 1, 1.0) == 0  # inside: at distance 0
