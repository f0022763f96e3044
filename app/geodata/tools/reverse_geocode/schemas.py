"""reverse_geocode's arguments and result models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.geodata.results import ADMIN1, DATASET, KIND, LABEL, LON, NAME, SOURCE, Kind, Result
from app.geodata.schemas import PointArgs


class ReverseGeocodeArgs(PointArgs):
    pass


# where postal codes are US ZIP codes: the US and its territories
ZIP_COUNTRIES = frozenset({"US", "PR", "VI", "GU", "AS", "MP"})


class NearestPostalCode(Result):
    code: str = Field(description="Postal code (US: ZIP)")
    distance_m: float = Field(description="To its centre")
    no_residents: bool = Field(False, description="US: PO box/building ZIP")


class ReverseGeocodeResult(Result):
    name: str = NAME
    label: str = LABEL
    kind: Kind = KIND
    lat: float = Field(description="The place's centre")
    lon: float = LON
    country_code: str | None = Field(None, description="The point's, ISO alpha-2")
    country: str | None = Field(None, description="The point's country")
    admin1: str | None = ADMIN1
    admin2: str | None = Field(None, description="County or district")
    county_fips: str | None = Field(None, description="US county FIPS")
    postal_code: str | None = Field(None, description="US ZIP whose area holds the point")
    postal_code_basis: str | None = Field(
        None,
        description="containment, address, estimate or nearest_centre",
    )
    nearest_postal_code: NearestPostalCode | None = Field(None, description="First candidate")
    postal_code_candidates: list[NearestPostalCode] = Field(
        default_factory=list,
        description="Not areas; US: likeliest first",
    )
    postal_code_uncertain: bool | None = Field(None, description="First may be wrong")
    warnings: list[str] = Field(default_factory=list, description="What it cannot be sure of")
    distance_km: float = Field(description="To the place's centre")
    at_sea: bool = Field(
        False,
        description="Past 22 km of land: no country or admin",
    )
    on_water: bool = Field(
        False,
        description="On a lake or sea (atSea too)",
    )
    water: Literal["lake", "sea"] | None = Field(None, description="When onWater")
    nearest_only: bool = Field(
        False,
        description="Not in the place, only nearest it",
    )
    source: str = SOURCE
    dataset: str = DATASET
