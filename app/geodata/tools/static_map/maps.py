"""What a static_map draws of the request, and the warnings for what it could not: labels
in characters the map font lacks, markers and a path outside the view."""

from __future__ import annotations

from collections.abc import Sequence

from app.geodata.rendering.labels import drawable, missing_glyphs
from app.geodata.rendering.map_image import MapMarker, MapPath, marker_drawn, path_drawn
from app.geodata.rendering.mercator import TILE_SIZE
from app.geodata.rendering.view import View
from app.geodata.tools.static_map.schemas import Marker, StaticMapArgs

NAMED_MAX = 5  # markers a warning names; it counts the rest


def markers(args: StaticMapArgs) -> list[MapMarker]:
    """The markers as drawn: a label without the characters the map font has no glyph for.

    Those are left out rather than the call refused: the map is still right about every
    marker, a hosted call refused over one label's script costs an agent a round trip to
    learn what a warning says, and an empty box tells whoever looks at the map nothing.
    `label_warnings` says what was left out."""
    return [
        MapMarker(m.lat, m.lon, m.color, (drawable(m.label) or None) if m.label else None)
        for m in args.markers
    ]


def label_warnings(args: StaticMapArgs) -> list[str]:
    """One warning for each label (once however many markers carry it) with characters the
    map font cannot draw."""
    warnings = []
    for label in dict.fromkeys(m.label for m in args.markers if m.label):
        missing = missing_glyphs(label)
        if not missing:
            continue
        kept = drawable(label)
        drawn = f"drawn as {kept!r}" if kept else "not drawn"
        warnings.append(
            f"Label {label!r}: its characters {missing!r} are not in the map font, so "
            f"{drawn}; use a Latin-script label, e.g. geocode's English name for the place"
        )
    return warnings


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


def world_warnings(view: View) -> list[str]:
    """A warning when the whole world is narrower than the image (drawn once, the sides
    blank), naming the zoom that fills the width."""
    if not view.whole_world:
        return []
    filling = next(z for z in range(view.zoom, 13) if TILE_SIZE * 2**z >= view.width)
    return [
        f"At zoom {view.zoom} the whole world is {int(view.scale)} px wide, narrower than "
        f"the {view.width} px image: it is drawn once, the sides left blank; zoom "
        f"{filling} fills the width, or ask for an image at most {int(view.scale)} px wide"
    ]
