"""US Census Bureau geocoder, geographies by coordinates: which ZCTA (ZIP Code Tabulation
Area), county, state, census tract and place polygons hold a point.

`GET {url}/geographies/coordinates?x=<lon>&y=<lat>&benchmark=Public_AR_Current
&vintage=Current_Current&layers=all&format=json` answers
`{"result": {"input": {...}, "geographies": {"<layer>": [{"GEOID": ..., "NAME": ...}]}}}`.
Layers used: "States" (STUSAB, NAME), "Counties" (GEOID = 5-digit FIPS, NAME), "Census
Tracts" (GEOID), "Incorporated Places" / "Census Designated Places" (NAME, "Jersey City
city"), and the ZCTA layer, whose name carries its vintage ("2020 Census ZIP Code
Tabulation Areas"), so it is found by substring; its ZCTA5 or GEOID is the code. A point
outside the US (or at sea) answers empty layers. Public domain, no key needed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.upstream.client import UpstreamClient

ATTRIBUTION = "U.S. Census Bureau geocoder (TIGER/Line, current vintage)"
DATASET = "census-geocoder@Current_Current"
ZCTA_LAYER = "zip code tabulation area"


@dataclass(frozen=True)
class CensusGeographies:
    zcta: str | None
    state_code: str | None  # USPS, "VA"
    state: str | None
    county_fips: str | None
    county: str | None
    tract: str | None
    place: str | None  # the incorporated (else designated) place, as the Census names it


def _first(geographies: dict[str, Any], layer: str) -> dict[str, Any]:
    rows = geographies.get(layer)
    return rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], dict) else {}


def _text(row: dict[str, Any], key: str) -> str | None:
    value = row.get(key)
    return str(value) if value not in (None, "") else None


def parse_geographies(body: Any) -> CensusGeographies:
    result = body.get("result") if isinstance(body, dict) else None
    geographies = result.get("geographies") if isinstance(result, dict) else None
    if not isinstance(geographies, dict):
        geographies = {}
    zcta_layer = next((k for k in geographies if ZCTA_LAYER in k.lower()), "")
    zcta = _first(geographies, zcta_layer)
    state = _first(geographies, "States")
    county = _first(geographies, "Counties")
    place = _first(geographies, "Incorporated Places") or _first(
        geographies, "Census Designated Places"
    )
    code = _text(zcta, "ZCTA5") or _text(zcta, "GEOID")
    return CensusGeographies(
        zcta=code if code and len(code) == 5 and code.isdigit() else None,
        state_code=_text(state, "STUSAB"),
        state=_text(state, "NAME"),
        county_fips=_text(county, "GEOID"),
        county=_text(county, "NAME"),
        tract=_text(_first(geographies, "Census Tracts"), "GEOID"),
        place=_text(place, "NAME"),
    )


class CensusGeocoderApi:
    def __init__(self, client: UpstreamClient) -> None:
        self.client = client

    def geographies(self, lat: float, lon: float) -> CensusGeographies:
        params = {
            "x": f"{lon:.6f}",
            "y": f"{lat:.6f}",
            "benchmark": "Public_AR_Current",
            "vintage": "Current_Current",
            "layers": "all",
            "format": "json",
        }

        def fetch() -> bytes:
            return self.client.get("/geographies/coordinates", params).content

        body = self.client.cached(("geographies", params["y"], params["x"]), fetch)
        return parse_geographies(json.loads(body))
