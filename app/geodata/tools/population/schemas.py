"""population's arguments and result models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.geodata.results import (
    AREA_COUNTRY,
    AREA_ID,
    AREA_NAME,
    CANDIDATES,
    DATASET,
    METHOD,
    MOE,
    SOURCE,
    WARNINGS,
    ZIP_ECHO,
    AreaLevel,
    Result,
)
from app.geodata.schemas import ZipArguments


class PopulationArgs(ZipArguments):
    pass


class PopulationResult(Result):
    postal_code: str | None = ZIP_ECHO
    level: AreaLevel = Field("postal_code", description="What the figure covers")
    name: str | None = AREA_NAME
    area_id: str | None = AREA_ID
    country_code: str | None = AREA_COUNTRY
    population: int = Field(description="Residents counted in the area")
    margin_of_error: int | None = MOE
    measure: Literal["total_population"] = Field(
        "total_population", description="What `population` counts"
    )
    year: int | None = Field(description="Year of the count or survey end; null: not stated")
    place_name: str | None = Field(None, description="The ZIP's main city")
    state: str | None = Field(None, description="US state code")
    county: str | None = Field(None, description="The ZIP's county")
    candidates: list[dict[str, str]] = CANDIDATES
    method: str | None = METHOD
    warnings: list[str] = WARNINGS
    source: str = SOURCE
    dataset: str = DATASET
