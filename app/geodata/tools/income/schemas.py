"""income's arguments and result models."""

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


class IncomeArgs(ZipArguments):
    pass


class IncomeResult(Result):
    postal_code: str | None = ZIP_ECHO
    level: AreaLevel = Field("postal_code", description="What the figure covers")
    name: str | None = AREA_NAME
    area_id: str | None = AREA_ID
    country_code: str | None = AREA_COUNTRY
    amount: int = Field(description="Household income in `currency` per year")
    margin_of_error: int | None = MOE
    currency: Literal["USD"] = Field("USD", description="Currency of `amount`")
    measure: Literal[
        "median_household_income",
        "mean_household_income",
        "household_weighted_mean_of_zip_medians",
    ] = Field(description="Which statistic `amount` is")
    year: int = Field(description="Last year of the survey period")
    period: str | None = Field(None, description='Survey period, e.g. "2020-2024"')
    lower_bound: bool = Field(
        False,
        description="Top-coded (e.g. 250,000+): the median is at least `amount`",
    )
    candidates: list[dict[str, str]] = CANDIDATES
    method: str | None = METHOD
    warnings: list[str] = WARNINGS
    source: str = SOURCE
    dataset: str = DATASET
