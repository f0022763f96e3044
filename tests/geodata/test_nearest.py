from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.geodata.catalogue import summarize
from app.geodata.geometry import haversine_km, haversine_km_many
from app.geodata.indices.nearest_grid import REACH_KM
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.nearest import MAX_REVERSE_KM, nearest_locality
from app.geodata.service import execute
from app.kit.errors import NotFound, Unsupported


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


def reverse(lat: float, lon: float) -> dict[str, object]:
    return execute("reverse_geocode", {"lat": lat, "lon": lon}).structured


class TestReverseGeocode:
    def test_centre_of_paris_is_paris(self) -> None:
        result = reverse(48.8566, 2.3522)
        assert (result["name"], result["countryCode"], result["admin1"]) == (
            "Paris",
            "FR",
            "Île-de-France",
        )
        # outside the US too (issue 41): the Hôtel de Ville is in 75004
        assert result["nearestPostalCode"]["code"] == "75004"  # type: ignore[index]
        assert 0 < float(result["distanceKm"]) < 1  # type: ignore[arg-type]

    def test_us_point_has_county_and_zip(self) -> None:
        result = reverse(30.267, -97.743)
        assert (result["name"], result["admin1"], result["admin2"]) == (
            "Austin",
            "Texas",
            "Travis County",
        )
        assert result["nearestPostalCode"]["code"] == "78701"  # type: ignore[index]
        assert 0 <= result["nearestPostalCode"]["distanceM"] < 5000  # type: ignore[index]
        assert result["postalCode"] is None  # a centre is never passed off as containment
        assert result["label"] == "Austin, Texas, US"

    def test_times_square_says_nearest_not_in(self) -> None:
        # Times Square is in 10036; the nearest ZCTA centre is 10020's, 0.4 km away: the
        # answer must say "nearest" and how far, not claim 10020 contains the point.
        result = reverse(40.7580, -73.9855)
        nearest = result["nearestPostalCode"]
        assert nearest["code"] in {"10020", "10036"}  # type: ignore[index]
        assert 100 < nearest["distanceM"] < 1000  # type: ignore[index]
        assert result["postalCode"] is None

    def test_outside_the_us_the_nearest_few_postal_codes_and_their_doubt(self) -> None:
        """A probe: at the Eiffel Tower (75007) one code, 75016, came with no doubt."""
        result = reverse(48.8584, 2.2945)
        codes = [c["code"] for c in result["postalCodeCandidates"]]  # type: ignore[union-attr]
        assert len(codes) == len(set(codes)) == 3
        assert result["postalCodeUncertain"] is True
        assert result["postalCodeBasis"] == "nearest_centre"
        text = summarize("reverse_geocode", result)
        assert "nearest postal code centres: " in text
        assert "ZIP" not in text

    def test_across_the_antimeridian(self) -> None:
        # Nearest by degrees would be Anadyr (177.5 E, 171 km); Egvekinot is over the line.
        result = reverse(65.9, 179.9)
        assert (result["name"], result["countryCode"]) == ("Egvekinot", "RU")
        assert float(result["lon"]) < 0  # type: ignore[arg-type]
        assert 60 < float(result["distanceKm"]) < 70  # type: ignore[arg-type]
        # and the other way: from just west of the line to Vanua Levu (Fiji), east of it;
        # Labasa (27,000 people) outweighs the nearer Savusavu (see nearest_locality)
        assert reverse(-16.75, -179.99)["name"] in ("Savusavu", "Labasa")
        assert float(reverse(-16.75, -179.99)["lon"]) > 178  # type: ignore[arg-type]

    def test_near_a_pole(self) -> None:
        # Degrees would pick Upernavik (72.8 N, 56 W); on the sphere Qaanaaq is closer.
        result = reverse(76.0, -60.0)
        assert result["name"] == "Qaanaaq"
        assert abs(float(result["distanceKm"]) - 286.0) < 1  # type: ignore[arg-type]

    def test_open_ocean_and_the_pole_are_not_found(self) -> None:
        with pytest.raises(NotFound, match="No place within"):
            reverse(0.0, -30.0)
        with pytest.raises(NotFound):
            reverse(90.0, 0.0)

    def test_nearest_locality_without_distance_cap(self, geodata: GeoData) -> None:
        feature, km = nearest_locality(geodata, -75.0, 0.0)
        assert geodata.names[feature] == "Grytviken"  # degrees: Tristan da Cunha
        assert km > MAX_REVERSE_KM

    def test_within_reach_of_the_nearest_place_of_its_country(self, geodata: GeoData) -> None:
        rng = np.random.default_rng(7)
        lats = np.degrees(np.arcsin(rng.uniform(-1, 1, 300)))
        lons = rng.uniform(-180, 180, 300)
        features = geodata.localities.features
        for lat, lon in zip(lats, lons, strict=True):
            feature, km = nearest_locality(geodata, float(lat), float(lon))
            # the point's country decides first (its border polygon), then size and distance
            same = features[geodata.country[features] == geodata.country[feature]]
            distances = haversine_km_many(lat, lon, geodata.lat[same], geodata.lon[same])
            nearest = float(distances.min())
            if nearest <= MAX_REVERSE_KM:  # farther is NOT_FOUND anyway
                assert nearest - 1e-6 <= km <= nearest + REACH_KM + 1e-6


class TestSearchNearby:
    def test_airports_near_jfk_sorted_within_radius(self) -> None:
        args = {"lat": 40.64, "lon": -73.78, "category": "airport", "radius_m": 20000, "limit": 5}
        result = execute("search_nearby", args).structured
        places = result["results"]
        assert places[0]["code"] == "JFK"
        assert "LGA" in [p["code"] for p in places]
        distances = [p["distanceM"] for p in places]
        assert distances == sorted(distances)
        assert distances[-1] <= 20000
        assert len(places) == 3  # JFK, LaGuardia and a seaplane base; Newark is 33 km away
        for place in places:
            exact = haversine_km(40.64, -73.78, place["lat"], place["lon"]) * 1000
            assert place["distanceM"] == pytest.approx(exact, abs=0.1)

    def test_airports_across_the_antimeridian(self) -> None:
        args = {"lat": -16.75, "lon": 179.8, "category": "airport", "radius_m": 50000}
        places = execute("search_nearby", args).structured["results"]
        assert [p["name"] for p in places] == ["Matei Airport", "Savusavu Airport"]
        assert places[0]["lon"] < 0 < places[1]["lon"]
        assert 34000 < places[0]["distanceM"] < 36000

    def test_zip_codes(self) -> None:
        args = {"lat": 40.7506, "lon": -73.9973, "category": "postal_code", "radius_m": 300}
        places = execute("search_nearby", args).structured["results"]
        assert places[0]["name"] == "10001"

    def test_near_the_pole_counts_metres_not_degrees(self) -> None:
        # Longyearbyen; 0.5 degrees of longitude is only about 11 km at 78 N
        args = {"lat": 78.22, "lon": 16.15, "category": "city", "radius_m": 15000}
        places = execute("search_nearby", args).structured["results"]
        assert places[0]["name"] == "Longyearbyen"
        assert 10000 < places[0]["distanceM"] < 12000

    def test_nothing_in_range_is_not_found(self) -> None:
        with pytest.raises(NotFound):
            execute("search_nearby", {"lat": 0.0, "lon": -30.0, "radius_m": 50000})

    def test_upstream_only_category_is_unsupported_not_absent(self) -> None:
        with pytest.raises(
            Unsupported, match="needs the upstream place search.*answers: city, airport"
        ):
            execute("search_nearby", {"lat": 0.0, "lon": 0.0, "category": "restaurant"})
