"""reverse_geocode: the place a point is in."""

from __future__ import annotations

from typing import Any

from app.geodata.batch import BatchForm, BatchList, batch_result
from app.geodata.schemas import LatLon
from app.geodata.tools.common import CREDIT, PLACES, km
from app.geodata.tools.reverse_geocode.schemas import (
    ZIP_COUNTRIES,
    ReverseGeocodeArgs,
    ReverseGeocodeResult,
)
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
    text += _postal_code(result) + "."
    for warning in result.get("warnings") or []:
        text += f" Note: {warning}."
    return text


def batch_item(result: dict[str, Any]) -> str:
    return f"{result['label']} ({result['distanceKm']:g} km from its centre)"


# how a postal code was found, as the text says it
BASES = {
    "containment": "by containment: the Census ZCTA whose area holds the point",
    "address": "the nearest address's postcode, not by area",
}


def _postal_code(result: dict[str, Any]) -> str:
    """The ZIP (postal code) part of the summary, with the basis it was found on."""
    code = "ZIP" if result.get("countryCode") in ZIP_COUNTRIES else "postal code"
    basis = result.get("postalCodeBasis")
    if result.get("postalCode"):
        return f", {code} {result['postalCode']} ({BASES.get(basis or '', basis)})"
    candidates = result.get("postalCodeCandidates") or []
    if not candidates:
        return ""
    uncertain = bool(result.get("postalCodeUncertain"))
    if basis == "estimate":  # zip_estimate.py: likeliest first, no ZIP areas offline
        listed = ", ".join(_zip_candidate(c) for c in candidates)
        how = "estimated from ZIP centres, land areas and bounding boxes (no ZIP areas offline)"
        if uncertain:
            return f"; {code} uncertain, {how}; likeliest first: {listed}"
        text = f"; {code} most likely {_zip_candidate(candidates[0])}, {how}"
        if len(candidates) > 1:
            text += "; less likely: " + ", ".join(_zip_candidate(c) for c in candidates[1:])
        return text
    listed = ", ".join(f"{c['code']} {km(c['distanceM'])}" for c in candidates)
    text = f"; {code} not known by area, nearest {code} centres: {listed}"
    if uncertain:
        text += " (comparably close: uncertain)"
    return text


def _zip_candidate(candidate: dict[str, Any]) -> str:
    said = f"{candidate['code']} (centre {km(candidate['distanceM'])} away"
    if candidate.get("noResidents"):
        said += "; no residents: a building's or PO box ZIP"
    return said + ")"


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
        "postalCodeBasis": "estimate",
        "nearestPostalCode": {
            "code": "10016",
            "distanceM": 736.9,
            "noResidents": False,
        },
        "postalCodeCandidates": [
            {"code": "10016", "distanceM": 736.9, "noResidents": False},
            {"code": "10001", "distanceM": 1008.5, "noResidents": False},
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
        "dataset": "places+borders@v12-5f26c172",
    },
    batch=(
        (
            {"lat": 0, "lon": -140},
            {
                "status": 404,
                "error": {
                    "code": "NOT_FOUND",
                    "message": "No place within 300 km of (0.0, -140.0) (open sea or "
                    "uninhabited land)",
                },
            },
        ),
    ),
)

SPEC = ToolSpec(
    "reverse_geocode",
    "Name the place at a point",
    "The place a point is in: country by border, the best-covering place; US: state "
    "and county by Census polygons. ZIP: likeliest, never claimed offline. On water: "
    "`onWater`, `nearestOnly`, `atSea`. NOT_FOUND: off land, no place within 300 km." + CREDIT,
    ReverseGeocodeArgs,
    ReverseGeocodeResult,
    __name__,
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
        "station's airfield, `nearestOnly`. ZIP codes: never claimed by "
        "area offline (no ZIP polygons ship): the up to 4 ZIPs of the point's state "
        "likeliest to hold it (`postalCodeCandidates`, `postalCodeBasis` estimate), "
        "ranked by distance relative to each ZCTA's size (its land area), those whose "
        "2010 bounding box leaves the point out dropped, ZIPs with no residents "
        "(a building's, PO box or unique ZIP) last; `postalCodeUncertain` when the "
        "second is comparably likely, the first is far for its size, or a ZIP with no "
        "residents may hold the point; outside the US the nearest postal code centres "
        "(nearest_centre) in the countries listed for geocode",
        "OpenStreetMap Nominatim names the place; in the US the Census Bureau geocoder "
        "gives the ZIP (ZCTA), county and state whose polygons hold the point "
        "(`postalCodeBasis` containment); if it is unavailable, the nearest address's "
        "postcode (address); where Nominatim finds nothing (at sea beyond the "
        "OpenStreetMap boundaries, which take in territorial waters) NOT_FOUND, so "
        "`atSea` stays false",
    ),
    batch=BatchForm(
        (BatchList("points", ("lat", "lon"), LatLon.model_json_schema()),),
        (),
        batch_result(ReverseGeocodeResult),
    ),
    batch_item=batch_item,
    answers_places=True,
)
