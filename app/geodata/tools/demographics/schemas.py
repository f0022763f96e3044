"""demographics's arguments and result models."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema, field_validator

from app.geodata.measures import TOPICS, Topic
from app.geodata.results import AREA_ID, AREA_NAME, DATASET, SOURCE, ZIP_ECHO, AreaLevel, Result
from app.geodata.schemas import ZipArguments


class DemographicsArgs(ZipArguments):
    topics: list[Topic] | None = Field(
        None, min_length=1, max_length=len(TOPICS), description="Only these topics (default all)"
    )

    @field_validator("topics", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        """/v1 passes `topics=age,housing` as one string."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",")]
        return value


class Measure(Result):
    topic: str = Field(description="e.g. age")
    name: str = Field(description="e.g. median_age")
    # a count stays an integer in JSON; "number" admits both
    value: Annotated[int | float | None, WithJsonSchema({"type": ["number", "null"]})] = Field(
        description="null if unpublished"
    )
    unit: Literal["count", "percent", "dollars", "years", "minutes", "persons"] = Field(
        description="Of `value`"
    )
    lower_bound: bool = Field(False, description="Top-coded: at least `value`")
    margin_of_error: float | None = Field(None, description="90% MOE, if published")
    of: str = Field(description="Whom it counts")


class DemographicsResult(Result):
    postal_code: str | None = ZIP_ECHO
    level: AreaLevel = Field("postal_code", description="What they cover")
    name: str | None = AREA_NAME
    area_id: str | None = AREA_ID
    country_code: Literal["US"] = Field("US", description="US")
    place_name: str | None = Field(None, description="Main city")
    state: str | None = Field(None, description="State code")
    measures: list[Measure] = Field(description="Figures")
    year: int = Field(description="Survey end")
    period: str = Field(description='e.g. "2019-2023"')
    source: str = SOURCE
    dataset: str = DATASET
    warnings: list[str] = Field(default_factory=list, description="Unpublished figures")
