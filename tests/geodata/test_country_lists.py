"""Per-country lists of the border cells (app/geodata/indices/country_lists.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.geodata.indices.country_lists import KEY_STRIDE
from app.geodata.indices.nearest_grid import COLS, STEP_DEG
from app.geodata.indices.reverse_build import GENERAL
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.nearest import REACH_CHORD, nearest_locality
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def exact_winner(data: GeoData, lat: float, lon: float, country: int) -> int:
    """nearest_locality's rule over every place of `country`, by brute force: the smallest
    chord / reach among the places at most REACH_CHORD beyond the nearest of them."""
    own = np.flatnonzero(data.locality_country == country)
    phi, lam = np.radians(lat), np.radians(lon)
    unit = np.array([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)])
    chords = np.linalg.norm(data.locality_xyz[own] - unit, axis=1)
    eligible = chords <= chords.min() + REACH_CHORD
    scores = np.where(eligible, chords**2 * data.inverse_reach_sq[own], np.inf)
    return int(data.localities.features[own[int(np.argmin(scores))]])


def lists_beyond_the_grid(data: GeoData) -> list[tuple[int, int]]:
    """(cell, country) of the border cells that list no place of a country they hold and
    got that country's list computed."""
    fast = data.fast
    found = []
    for at, key in enumerate(np.asarray(fast.cl_key).tolist()):
        cell, country = divmod(key, KEY_STRIDE)
        listed = data.grid_cand[fast.grid_off[cell] : fast.grid_off[cell + 1]]
        has_places = fast.cl_off[at + 1] > fast.cl_off[at]
        if has_places and not (data.locality_country[listed] == country).any():
            found.append((cell, country))
    return found


class TestCountryLists:
    def test_only_border_cells_have_them(self, geodata: GeoData) -> None:
        keys = np.asarray(geodata.fast.cl_key)
        assert (np.diff(keys) > 0).all()
        cells = np.unique(keys // KEY_STRIDE)
        assert (np.asarray(geodata.fast.grid_filter)[cells] == GENERAL).all()

    def test_a_list_beyond_the_grids_is_exact(self, geodata: GeoData) -> None:
        """Where a border cell lists no place of the point's country (a remote border),
        the answer is the exact one among that country's places. It was the best of the
        KD-tree's 64 nearest places, which could leave out the winner."""
        pairs = lists_beyond_the_grid(geodata)
        assert len(pairs) > 100
        rng = np.random.default_rng(41)
        checked = 0
        for cell, country in [pairs[i] for i in rng.choice(len(pairs), 150, replace=False)]:
            row, col = divmod(cell, COLS)
            for _ in range(4):
                lat = -90.0 + (row + rng.uniform()) * STEP_DEG
                lon = -180.0 + (col + rng.uniform()) * STEP_DEG
                feature, _km = nearest_locality(geodata, lat, lon)
                if geodata.country[feature] != country:
                    continue  # the point is in the cell's other country
                assert feature == exact_winner(geodata, lat, lon, country), (lat, lon)
                checked += 1
        assert checked > 100

    def test_french_guiana_is_not_france_proper(self) -> None:
        # Natural Earth's France holds French Guiana; GeoNames files its places under GF.
        # France proper's nearest place is 6,600 km away: the nearest places answer.
        result = execute("reverse_geocode", {"lat": 4.0, "lon": -53.0}).structured
        assert result["countryCode"] == "GF"
        assert float(result["distanceKm"]) < 150
