"""US states and counties for reverse_geocode's containment test: the Census Bureau's
cartographic boundary files at 1:500,000 (2016), as shipped by plotly-geo.

Stored as every ring's points (`cty_xy`), where each ring starts (`cty_ring_off`) and
which county it belongs to (`cty_ring_county`); the table `usCounties` names each county
with its 5-digit FIPS code and its state. The service builds the polygons on first use
(providers/embedded/counties.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.shapefile import dbf_column, polygon_records
from app.geodata.indices.sources import package_dir

# the Census legal/statistical area description codes of county equivalents
LSAD = {
    "03": "City and Borough",
    "04": "Borough",
    "05": "Census Area",
    "06": "County",
    "07": "District",
    "10": "Island",
    "12": "Municipality",
    "13": "Municipio",
    "15": "Parish",
    "25": "city",
}


def _read(stem: str) -> tuple[bytes, bytes]:
    folder = package_dir("_plotly_geo") / "package_data"
    return (folder / f"{stem}.shp").read_bytes(), (folder / f"{stem}.dbf").read_bytes()


def county_name(name: str, lsad: str) -> str:
    """ "Arlington" + 06 -> "Arlington County"; names that carry their kind stay as they are."""
    kind = LSAD.get(lsad, "")
    return f"{name} {kind}" if kind and not name.endswith(kind) else name


def county_arrays() -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
    """The arrays and the `usCounties` table described above."""
    _shp, state_dbf = _read("cb_2016_us_state_500k")
    states = dict(
        zip(
            dbf_column(state_dbf, "STATEFP"),
            zip(dbf_column(state_dbf, "STUSPS"), dbf_column(state_dbf, "NAME"), strict=True),
            strict=True,
        )
    )
    shp, dbf = _read("cb_2016_us_county_500k")
    columns = {c: dbf_column(dbf, c) for c in ("STATEFP", "GEOID", "NAME", "LSAD")}
    rows: list[dict[str, str]] = []
    for i, fips in enumerate(columns["GEOID"]):
        code, state = states.get(columns["STATEFP"][i], ("", ""))
        rows.append(
            {
                "fips": fips,
                "name": county_name(columns["NAME"][i], columns["LSAD"][i]),
                "stateCode": code,
                "state": state,
            }
        )
    points: list[npt.NDArray[np.float64]] = []
    ring_county: list[int] = []
    for record, rings in polygon_records(shp):
        points.extend(rings)
        ring_county.extend([record] * len(rings))
    lengths = np.asarray([len(ring) for ring in points], dtype=np.int64)
    arrays: dict[str, npt.NDArray[Any]] = {
        "cty_xy": np.concatenate(points).astype(np.float64),
        "cty_ring_off": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "cty_ring_county": np.asarray(ring_county, dtype=np.int32),
    }
    return arrays, {"usCounties": rows}
