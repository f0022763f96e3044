"""static_map from the shipped basemap: the view a request shows, drawn with its markers
and path."""

from __future__ import annotations

from app.geodata.providers.embedded import EmbeddedProvider, attribution
from app.geodata.rendering.map_image import MapPath, marker_reach, path_reach, render
from app.geodata.rendering.view import View, fit
from app.geodata.schemas import BBox, LatLon
from app.geodata.tools.static_map import choropleth, maps, outlines
from app.geodata.tools.static_map.schemas import StaticMapArgs, StaticMapResult


def map_view(provider: EmbeddedProvider, args: StaticMapArgs) -> View:
    """The part of the world a static_map request shows."""
    box = args.bbox
    return fit(
        [(m.lat, m.lon) for m in args.markers],
        width=args.width,
        height=args.height,
        center=(args.center.lat, args.center.lon) if args.center else None,
        zoom=args.zoom,
        bbox=(box.west, box.south, box.east, box.north) if box else None,
        reach=[marker_reach(m) for m in maps.markers(args)],
        path=[(p.lat, p.lon) for p in args.path],
        path_reach=path_reach(args.path_width),
    )


def answer(provider: EmbeddedProvider, args: StaticMapArgs) -> StaticMapResult:
    view = map_view(provider, args)
    markers = maps.markers(args)
    path = MapPath([(p.lat, p.lon) for p in args.path], args.path_color, args.path_width)
    areas = choropleth.layer(provider.data, view, args.choropleth) if args.choropleth else None
    png = render(
        provider.basemap,
        view,
        markers,
        provider.place_names,
        attribution.MAP_ATTRIBUTION,
        path,
        provider.countries,
        areas=areas.fill if areas else None,
    )
    drawn, left_out = maps.left_out(view, args, markers, path)
    west, south, east, north = view.bbox()
    lon, lat = view.center_lonlat()
    result = StaticMapResult(
        width=args.width,
        height=args.height,
        center=LatLon(lat=lat, lon=lon),
        zoom=view.zoom,
        bbox=BBox(west=west, south=south, east=east, north=north),
        markers=drawn,
        warnings=maps.label_warnings(args)
        + left_out
        + maps.world_warnings(view)
        + (choropleth.warnings(view, areas) if areas else []),
        bytes=len(png),
        attribution=attribution.MAP_ATTRIBUTION,
        source=attribution.MAP_ATTRIBUTION,
        dataset=attribution.basemap_dataset(provider.data.meta),
        choropleth=areas.summary if areas else None,
    )
    app_meta = {outlines.OUTLINES_META: outlines.build(view, areas)} if areas else None
    return result.with_png(png, app_meta)
