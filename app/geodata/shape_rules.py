"""The rules a shape argument (`within`: a bbox or a polygon) must meet, checked when the
arguments are read (schemas.Shape), so every refusal names its rule.

A shape lies on one side of the antimeridian, has an area, does not cross itself, and
fits within MAX_SHAPE_RADIUS_KM of its centre (the bbox's of its vertices), as a circle
(`around`) does within 100 km.
"""

from __future__ import annotations

from math import cos, radians

MAX_POLYGON_VERTICES = 500
MAX_SHAPE_RADIUS_KM = 100.0
KM_PER_DEGREE_LAT = 110.57
KM_PER_DEGREE_LON = 111.32  # at the equator; times cos(latitude)


def centre(vertices: list[tuple[float, float]]) -> tuple[float, float]:
    """(lon, lat) of the middle of the vertices' bbox."""
    lons, lats = [v[0] for v in vertices], [v[1] for v in vertices]
    return (min(lons) + max(lons)) / 2, (min(lats) + max(lats)) / 2


def local_km(
    vertices: list[tuple[float, float]], lon0: float, lat0: float
) -> list[tuple[float, float]]:
    """The vertices on a plane in km around (lon0, lat0): fine within 100 km."""
    kx = KM_PER_DEGREE_LON * cos(radians(lat0))
    return [((lon - lon0) * kx, (lat - lat0) * KM_PER_DEGREE_LAT) for lon, lat in vertices]


def bbox_problem(west: float, south: float, east: float, north: float) -> str | None:
    if west > east:
        return "bbox crosses the antimeridian (west > east): give two shapes, one each side"
    if west == east or south >= north:
        return "bbox is degenerate: west < east and south < north are required"
    corners = [(west, south), (east, south), (east, north), (west, north)]
    return _size_problem(corners)


def polygon_problem(vertices: list[tuple[float, float]]) -> str | None:
    """Why the ring of `vertices` ([lon, lat], closed or not) is no shape, else None."""
    if len(vertices) > 1 and vertices[0] == vertices[-1]:
        vertices = vertices[:-1]
    if len(vertices) > MAX_POLYGON_VERTICES:
        return f"polygon has {len(vertices)} vertices: at most {MAX_POLYGON_VERTICES}"
    if len(set(vertices)) < 3:
        return "polygon is degenerate: at least 3 distinct vertices are required"
    closed = [*vertices, vertices[0]]
    if any(abs(a[0] - b[0]) > 180 for a, b in zip(closed, closed[1:], strict=False)):
        return "polygon crosses the antimeridian: give two shapes, one each side"
    import shapely  # GEOS and numpy: only when a polygon is given (api start-up stays light)

    if shapely.MultiPoint(vertices).convex_hull.area == 0:
        return "polygon is degenerate: its vertices are on one line and enclose no area"
    ring = shapely.Polygon(vertices)
    if not shapely.LinearRing(vertices).is_simple or not ring.is_valid:
        return "polygon crosses itself: its edges may meet only at the vertices they share"
    return _size_problem(vertices)


def _size_problem(vertices: list[tuple[float, float]]) -> str | None:
    lon0, lat0 = centre(vertices)
    reach = max(x * x + y * y for x, y in local_km(vertices, lon0, lat0)) ** 0.5
    if reach > MAX_SHAPE_RADIUS_KM:
        return (
            f"shape reaches {reach:.0f} km from its centre: at most {MAX_SHAPE_RADIUS_KM:g} km "
            "(as a circle's radius)"
        )
    return None
