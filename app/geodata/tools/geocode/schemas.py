"""geocode's arguments and result models."""

from __future__ import annotations

from pydantic import Field, field_validator

from app.geodata.results import (
    ADMIN1,
    AIRPORT_TYPE,
    COUNTRY_CODE,
    DATASET,
    KIND,
    LABEL,
    LAT,
    LON,
    NAME,
    POPULATION,
    SOURCE,
    AirportType,
    Kind,
    Result,
)
from app.geodata.schemas import Arguments, CountryCode


class GeocodeArgs(Arguments):
    query: str = Field(
        strict=True,
        min_length=1,
        max_length=256,
        description="A place's name, postal code, airport code or address",
    )
    country: CountryCode | None = Field(
        None, description="Only results in this country (ISO 3166-1 alpha-2 code)"
    )
    limit: int = Field(5, strict=True, ge=1, le=10, description="At most this many results")

    @field_validator("query", mode="after")
    @classmethod
    def _printable(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("must not be blank")
        if any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value


class GeocodeMatch(Result):
    name: str = NAME
    label: str = LABEL
    lat: float = LAT
    lon: float = LON
    kind: Kind = KIND
    country_code: str | None = COUNTRY_CODE
    admin1: str | None = ADMIN1
    postal_code: str | None = Field(None, description="ZIP code, when the place is one")
    population: int | None = POPULATION
    type: AirportType | None = AIRPORT_TYPE
    confidence: float = Field(
        ge=0, le=1, description="How well the place matches the query, 0 to 1"
    )
    matched: str | None = Field(
        None,
        description="The part of the query matched",
    )


class GeocodeCandidate(Result):
    # one of the places an ambiguous name fits; fields as in `results`

    name: str = NAME
    label: str = LABEL
    kind: Kind = KIND
    country_code: str | None = COUNTRY_CODE
    admin1: str | None = ADMIN1
    lat: float = LAT
    lon: float = LON
    confidence: float = Field(ge=0, le=1, description="As in `results`")

    @classmethod
    def of(cls, match: GeocodeMatch) -> GeocodeCandidate:
        return cls.model_validate(match.model_dump(include=set(cls.model_fields)))


class GeocodeResult(Result):
    query: str = Field(description="The query as received")
    results: list[GeocodeMatch] = Field(description="Matches, best first")
    ambiguous: bool = Field(
        False,
        description="Well-known places far apart fit the name: ask which is meant, or say "
        "which you chose",
    )
    candidates: list[GeocodeCandidate] = Field(
        default_factory=list,
        description="When `ambiguous`: the competing places, best first (up to 5)",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="What the results are not",
    )
    source: str = SOURCE
    dataset: str = DATASET
