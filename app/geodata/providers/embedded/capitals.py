"""Which labelled places are national capitals, for the map to mark them.

countryinfo (already a dependency, read for the index's country centres) gives each
country's capital by name and point; the capital is the labelled place of that name
within NAMED_KM of the point (the name alone is ambiguous, the point alone lands on a
bigger neighbour, Rawalpindi for Islamabad, or is the country's centre, as Luxembourg's),
else the nearest place within NEAREST_KM."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import numpy.typing as npt

from app.geodata.geometry import unit_vectors
from app.geodata.indices.sources import package_dir
from app.geodata.providers.embedded.data import GeoData

NAMED_KM = 30.0
NEAREST_KM = 15.0
EARTH_KM = 6371.0


def capital_points() -> list[tuple[str, str, float, float]]:
    """(country code, name, lat, lon) of every capital countryinfo knows."""
    points = []
    for path in sorted((package_dir("countryinfo") / "data").glob("*.json")):
        country = json.loads(path.read_text(encoding="utf-8"))
        latlng = country.get("capital_latlng") or []
        code = str((country.get("ISO") or {}).get("alpha2") or "")
        if len(latlng) == 2 and code:
            name = str(country.get("capital") or "")
            points.append((code, name, float(latlng[0]), float(latlng[1])))
    return points


def _plain(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def places(data: GeoData) -> npt.NDArray[np.intp]:
    """Indices into the labelled places (data.localities) of the capitals, ascending."""
    points = capital_points()
    if not points:
        return np.zeros(0, dtype=np.intp)
    lat = np.array([p[2] for p in points])
    lon = np.array([p[3] for p in points])
    xyz = unit_vectors(lat, lon)
    chord = 2 * np.sin(NAMED_KM / EARTH_KM / 2)
    nearest_chord = 2 * np.sin(NEAREST_KM / EARTH_KM / 2)
    near = data.localities.tree.query_ball_point(xyz, chord)
    features = data.localities.features
    found: set[int] = set()
    for (code, name, _lat, _lon), point, indices in zip(points, xyz, near, strict=True):
        # in the capital's country: countryinfo puts Montserrat's Plymouth in Devon
        indices = [i for i in indices if data.country_code(int(features[i])) == code]
        if not indices:
            continue
        named = [i for i in indices if _plain(data.names[int(features[i])]) == _plain(name)]
        if named:
            found.add(min(named))  # places are most populous first
        else:
            distances = np.linalg.norm(data.locality_xyz[indices] - point, axis=1)
            if distances.min() <= nearest_chord:
                found.add(int(indices[int(np.argmin(distances))]))
    return np.array(sorted(found), dtype=np.intp)
