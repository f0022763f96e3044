"""What a static_map draws of the request, and the warnings for what it could not: markers
and a path outside the view."""

from __future__ import annotations

from collections.abc import Sequence

from app.geodata.rendering.static_map import MapMarker, MapPath, marker_drawn, path_drawn
from app.geodata.rendering.view import View
from app.geodata.schemas import Marker, StaticMapArgs

NAMED_MAX = 5  # markers a warning names; it counts the rest


def markers(args: StaticMapArgs) -> list[MapMarker]:
    return [MapMarker(m.lat, m.lon, m.color, m.label) for m in args.markers]


def left_out(
    view: View, args: StaticMapArgs, map_markers: Sequence[MapMarker], path: MapPath
) -> tuple[int, list[str]]:
    """How many markers the image shows, and warnings for the markers (named, up to
    NAMED_MAX) and the path wholly outside it."""
    outside = [i for i, m in enumerate(map_markers) if not marker_drawn(view, m)]
    warnings = []
    if outside:
        named = ", ".join(_name(i, args.markers[i]) for i in outside[:NAMED_MAX])
        more = f" and {len(outside) - NAMED_MAX} more" if len(outside) > NAMED_MAX else ""
        warnings.append(
            f"{len(outside)} of {len(map_markers)} markers are outside the map's view and "
            f"not drawn: {named}{more}; {_how_to_include(args, 'every marker')}"
        )
    if len(path.points) >= 2 and not path_drawn(view, path):
        warnings.append(
            f"The path is outside the map's view and not drawn; {_how_to_include(args, 'it')}"
        )
    return len(map_markers) - len(outside), warnings


def _name(index: int, marker: Marker) -> str:
    if marker.label:
        return repr(marker.label)
    return f"markers[{index}] ({marker.lat:g}, {marker.lon:g})"


def _how_to_include(args: StaticMapArgs, what: str) -> str:
    given = [name for name in ("center", "zoom") if getattr(args, name) is not None]
    if not given:  # a fit, down to zoom 0: the image is too small for how far apart they are
        return "make the image larger"
    lower = ", or lower the zoom" if args.zoom else ""  # zoom 0 is the lowest
    return f"leave out {' and '.join(given)} to fit the map to {what}{lower}"
