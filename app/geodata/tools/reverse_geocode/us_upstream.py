"""reverse_geocode upstream, in the US: the Census Bureau geocoder's polygons (ZCTA,
county, state) decide `postalCode`, `admin1`, `admin2` and `countyFips` by containment;
Nominatim names the place. Without the Census answer (outage) the ZIP is Nominatim's
postcode of the nearest address, said as such (`postalCodeBasis` "address", a warning)."""

from __future__ import annotations

from app.geodata.tools.reverse_geocode.schemas import ReverseGeocodeArgs, ReverseGeocodeResult
from app.kit.errors import UpstreamUnavailable
from app.upstream import census_geocoder
from app.upstream.census_geocoder import CensusGeocoderApi, CensusGeographies
from app.upstream.client import UpstreamStatusError


def us_containment(
    api: CensusGeocoderApi,
    args: ReverseGeocodeArgs,
    result: ReverseGeocodeResult,
    address_postcode: str | None,
) -> ReverseGeocodeResult:
    if result.country_code != "US":
        return result
    try:
        found: CensusGeographies | None = api.geographies(args.lat, args.lon)
    except (UpstreamUnavailable, UpstreamStatusError, ValueError):
        found = None
    if found is None or found.county_fips is None:
        why = "unavailable" if found is None else "has no county at the point"
        return result.model_copy(
            update={
                "postal_code": address_postcode,
                "postal_code_basis": "address" if address_postcode else None,
                "warnings": [
                    f"US Census geocoder {why}: state, county and ZIP are OpenStreetMap's "
                    "address details, not containment"
                ],
            }
        )
    return result.model_copy(
        update={
            "admin1": found.state or result.admin1,
            "admin2": found.county,
            "county_fips": found.county_fips,
            "postal_code": found.zcta,
            "postal_code_basis": "containment" if found.zcta else None,
            "warnings": [] if found.zcta else ["No ZIP Code Tabulation Area holds the point"],
            "source": f"{result.source}; {census_geocoder.ATTRIBUTION}",
            "dataset": f"{result.dataset}+{census_geocoder.DATASET}",
        }
    )
