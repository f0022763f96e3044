"""Turn the packaged datasets into the indices (see store.py for the layout).

Each data source adds its features in its own module (places_build, zips_build,
airports_build, basemap_build); this module runs them in order and writes the result.
The basemap (about 40 % of the build's CPU, needing nothing else built) and the admin-1
polygons (needing only the places) are made in processes of their own meanwhile: on two
cores the build takes about the time of the rest.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import unit_vectors
from app.geodata.indices import sources, water_sources
from app.geodata.indices.admin1_build import admin1_arrays
from app.geodata.indices.airports_build import add_airports
from app.geodata.indices.counties_build import county_arrays
from app.geodata.indices.country_grid import build_country_grid
from app.geodata.indices.feature_table import IndexBuilder, Progress
from app.geodata.indices.nearest_grid import build_grid
from app.geodata.indices.places_build import add_admin1, add_cities, add_countries, load_reference
from app.geodata.indices.postal_build import add_postal_codes
from app.geodata.indices.reverse_build import reverse_extras
from app.geodata.indices.spelling_build import add_spelling_keys
from app.geodata.indices.store import (
    LAYER_ISLAND,
    LAYER_LAKE,
    LAYER_RIVER,
    expected_stamp,
    write_index,
)
from app.geodata.indices.water_grid import build_water_grid, water_rings
from app.geodata.indices.zips_build import add_zips

STEPS = (
    "places",
    "subdivisions",
    "countries",
    "ZIP codes",
    "postal codes",
    "airports",
    "name index",
    "boundaries",
    "basemap",
    "write",
)


def _finish_features(b: IndexBuilder) -> None:
    f = b.features
    b.arrays.update(
        f_kind=np.asarray(f.kind, dtype=np.uint8),
        f_lat=np.asarray(f.lat, dtype=np.float64),
        f_lon=np.asarray(f.lon, dtype=np.float64),
        f_population=np.asarray(f.population, dtype=np.int64),
        f_country=np.asarray(f.country, dtype=np.int16),
        f_admin1=np.asarray(f.admin1, dtype=np.int32),
        f_admin2=np.asarray(f.admin2, dtype=np.int32),
    )
    b.strings("f_name", f.name)
    b.strings("f_code", f.code)
    b.strings("admin2", b.admin2_names)
    b.progress("name index")
    b.arrays.update(b.names.arrays())
    b.tables["countries"] = [
        {k: row[k] for k in ("code", "iso3", "name", "population", "lat", "lon")}
        for row in b.countries
    ]
    b.tables["admin1"] = [
        {k: row[k] for k in ("name", "code", "geonames", "country")} for row in b.admin1
    ]


def _basemap() -> dict[str, np.ndarray[Any, Any]]:
    """static_map's vectors (basemap_build.py), from the packages alone."""
    from app.geodata.indices.basemap_build import COAST_RESOLUTION, basemap_arrays

    lakes, islands = water_sources.natural_earth_lakes()
    water = {LAYER_LAKE: lakes, LAYER_ISLAND: islands, LAYER_RIVER: water_sources.gshhg_rivers()}
    coast = {
        level: partial(water_sources.gshhg_shorelines, resolution)
        for level, resolution in COAST_RESOLUTION.items()
    }
    countries = [ring for _code, ring in sources.natural_earth_countries()]
    return basemap_arrays(
        countries, sources.us_state_shapes(), water, coast, water_sources.estuaries()
    )


def _water_grid() -> dict[str, np.ndarray[Any, Any]]:
    """reverse_geocode's land, lake and sea test (water_grid.py), from the packages alone."""
    return build_water_grid(water_rings())


def _places_with_admin1(b: IndexBuilder) -> npt.NDArray[np.float64]:
    """(lat, lon, admin1 row) of the GeoNames places with a known admin1."""
    cities = np.arange(b.city_count)
    known = cities[np.asarray(b.features.admin1)[cities] >= 0]
    return np.column_stack(
        [
            np.asarray(b.features.lat)[known],
            np.asarray(b.features.lon)[known],
            np.asarray(b.features.admin1)[known],
        ]
    )


def build(data_dir: Path, progress: Progress | None = None) -> Path:
    """Build every index from the installed packages and write it under `data_dir`."""
    # spawn, not fork: the caller may have threads (a test process, a server)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        return _build(data_dir, progress or (lambda _step: None), pool)


def _build(data_dir: Path, report: Progress, pool: Executor) -> Path:
    started = time.monotonic()
    basemap = pool.submit(_basemap)
    water = pool.submit(_water_grid)
    builder = IndexBuilder(report)
    report("places")
    load_reference(builder)
    add_cities(builder)
    add_admin1(builder)
    add_countries(builder)
    admin1 = pool.submit(
        admin1_arrays, builder.admin1, builder.countries, _places_with_admin1(builder)
    )
    add_zips(builder)
    add_postal_codes(builder)
    add_airports(builder)
    _finish_features(builder)
    add_spelling_keys(builder)
    features = builder.arrays["reverse_features"]
    builder.arrays.update(
        build_grid(
            unit_vectors(
                np.asarray(builder.features.lat)[features],
                np.asarray(builder.features.lon)[features],
            )
        )
    )
    report("boundaries")
    coded_rings = sources.natural_earth_countries()
    builder.arrays.update(build_country_grid(coded_rings, builder.country_index))
    extra_arrays, extra_tables = reverse_extras(builder.arrays, builder.country_index)
    builder.arrays.update(extra_arrays)
    builder.tables.update(extra_tables)
    county_arrays_, county_tables = county_arrays()
    builder.arrays.update(county_arrays_)
    builder.tables.update(county_tables)
    admin1_arrays_, admin1_counts = admin1.result()
    builder.arrays.update(admin1_arrays_)
    builder.arrays.update(water.result())
    report("basemap")
    builder.arrays.update(basemap.result())
    report("write")
    counts = {
        "features": len(builder.features.kind),
        "cities": builder.city_count,
        "localities": len(builder.arrays["reverse_features"]),
        "zips": len(builder.zip_codes),
        "postalCodes": len(builder.arrays["postal_key"]),
        "airports": len(builder.arrays["airport_features"]),
        "names": len(builder.arrays["key_hash"]),
        **admin1_counts,
    }
    meta = {
        **expected_stamp(),
        "builtAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "buildSeconds": round(time.monotonic() - started, 1),
        "counts": counts,
    }
    return write_index(data_dir, builder.arrays, builder.tables, meta)
