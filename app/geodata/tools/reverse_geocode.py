"""reverse_geocode: the place a point is in."""

from __future__ import annotations

from typing import Any

from app.geodata import results, schemas
from app.geodata.batch import BatchForm, BatchList, batch_result
from app.geodata.tools.common import CREDIT, PLACES, km
from app.geodata.tools.spec import Example, ToolSpec


def summary(result: dict[str, Any]) -> str:
    nearest = f"the nearest place is {result['label']}, {result['distanceKm']:g} km away"
    if result.get("atSea"):  # in no country: the nearest place only, said as such
        text = f"At sea; {nearest}"
    elif result.get("nearestOnly"):  # in a country, in no town: never "In <town>"
        where = {"lake": "On a lake", "sea": "On the sea"}.get(result.get("water") or "")
        text = f"{where or 'On land'} in {result.get('country')}, in no town; {nearest}"
    else:
        text = f"In {result['label']} ({result['distanceKm']:g} km from its centre)"
    if result.get("countyFips"):
        text += f"; the point is in {result['admin2']}, {result['admin1']}"
    code = "ZIP" if result.get("countryCode") in results.ZIP_COUNTRIES else "postal code"
    if result.get("postalCode"):
        basis = result.get("postalCodeBasis")
        text += f", {code} {result['postalCode']}" + (f" ({basis})" if basis else "")
    candidates = result.get("postalCodeCandidates") or []
    if candidates and not result.get("postalCode"):
        listed = ", ".join(f"{c['code']} {km(c['distanceM'])}" for c in candidates)
        text += f"; {code} not known by area, nearest {code} centres: {listed}"
        if result.get("postalCodeUncertain"):
            text += " (comparably close: uncertain)"
    text += "."
    for warning in result.get("warnings") or []:
        text += f" Note: {warning}."
    return text


EXAMPLE = Example(
    {"lat": 40.7484, "lon": -73.9857},
    {
        "name": "New York City",
        "label": "New York City, New York, US",
        "kind": "city",
        "lat": 40.71427,
        "lon": -74.00597,
        "countryCode": "US",
        "country": "United States",
        "admin1": "New York",
        "admin2": "New York County",
        "countyFips": "36061",
        "postalCode": None,
        "postalCodeBasis": "nearest_centre",
        "nearestPostalCode": {"code": "10119", "distanceM": 642.8},
        "postalCodeCandidates": [
            {"code": "10119", "distanceM": 642.8},
            {"code": "10165", "distanceM": 719.5},
            {"code": "10016", "distanceM": 736.9},
        ],
        "postalCodeUncertain": True,
        "warnings": [],
        "distanceKm": 4.162,
        "atSea": False,
        "onWater": False,
        "water": None,
        "nearestOnly": False,
        "source": f"{PLACES}, Natural Earth, US Census counties, "
        "© OpenStreetMap contributors (ODbL)",
        "dataset": "places+borders@v7-66e65d86",
    },
)

SPEC = ToolSpec(
    "reverse_geocode",
    "Name the place at a point",
    "The place a point is in: country by border, the place covering it best; US: state "
    "and county by Census polygons. ZIP: nearest centres "
    "(`postalCodeCandidates`), never by area offline. On a lake or the sea: `onWater`, "
    "the place only the nearest (`nearestOnly`); beyond a country's 22 km: `atSea`. "
    "NOT_FOUND: no place within 300 km and on no country's land." + CREDIT,
    schemas.ReverseGeocodeArgs,
    results.ReverseGeocodeResult,
    "reverse_geocode",
    summary,
    "/v1/reverse-geocode",
    EXAMPLE,
    coverage=(
        "countries everywhere by their borders; in the US the state and county by "
        "containment (Census cartographic boundaries 1:500k, 2016, with `countyFips`) "
        "and a place of that state (a `warning` when none is within 60 km); elsewhere "
        "admin1 by containment in Natural Earth's 1:10 M first-level regions (states, "
        "provinces, regions: 3,083 of GeoNames' admin1 in 202 countries) and a place "
        "of that region; near a generalised line a town centre within 2.5 km keeps "
        "its own region, and where no polygon fits (e.g. the Philippines, Latvia, "
        "Sri Lanka, Kenya, Moscow) admin1 is the place's, both said in `warnings`; "
        "admin2 is the place's. A point on no country's land (Natural Earth 1:10m) "
        "and more than 22 km (12 nautical miles) from it and from any populated place "
        "is at sea (`atSea`): no country, admin1 or admin2, the nearest place and its "
        "distance, said in `warnings`; waters a country holds beyond that (archipelagic "
        "waters, Lake Maracaibo) count as sea too. A point on a lake or the sea more than "
        "300 m from GSHHG's 0.2 km shoreline (a bay, Lake Michigan, Lake Geneva, the "
        "Caspian) is `onWater` (`water` lake or sea; the data names no water body): its "
        "country, admin1 and county as on land, the place only the nearest "
        "(`nearestOnly`). A point on a country's land with no place within 300 km "
        "(Antarctica, Greenland's ice) answers its country and the nearest place or "
        "station's airfield, `nearestOnly`. ZIP codes: never by area "
        "offline, the up to 3 nearest ZIP centres in the point's county "
        "(`postalCodeCandidates`, `postalCodeBasis` nearest_centre, "
        "`postalCodeUncertain` when the nearest two are comparably close); outside the "
        "US the nearest postal code centre in the countries listed for geocode",
        "OpenStreetMap Nominatim names the place; in the US the Census Bureau geocoder "
        "gives the ZIP (ZCTA), county and state whose polygons hold the point "
        "(`postalCodeBasis` containment); if it is unavailable, the nearest address's "
        "postcode (address); where Nominatim finds nothing (at sea beyond the "
        "OpenStreetMap boundaries, which take in territorial waters) NOT_FOUND, so "
        "`atSea` stays false",
    ),
    batch=BatchForm(
        (BatchList("points", ("lat", "lon"), schemas.LatLon.model_json_schema()),),
        (),
        batch_result(results.ReverseGeocodeResult),
    ),
)
