"""get_demographics upstream: the Census ACS 5-year data profiles (DP02-DP05) of a ZIP
code (its ZCTA) or a named area (the nation, a state, a county, a place), the same 20
measures as the offline table (`app.geodata.measures`), each with its 90% margin of error.

Where the Census publishes an annotation value instead of a figure, the measure's value
(or margin) is null and `warnings` says why; never the sentinel as a number. The median
home value's top code (2,000,000+) is answered as a lower bound.
"""

from __future__ import annotations

from collections import defaultdict

from app.geodata import measures as profile
from app.geodata.measures import TOPICS
from app.geodata.providers import upstream_areas
from app.geodata.results import area_candidate
from app.geodata.tools.demographics.schemas import (
    DemographicsArgs,
    DemographicsResult,
    Measure,
)
from app.kit.errors import NotFound
from app.upstream.census import CensusAcsApi
from app.upstream.census_profile import AcsProfile, CensusProfileApi, ProfileFigure
from app.upstream.client import UpstreamStatusError

# The Census Data API's annotation values (census.gov, "Notes on ACS API Variable Types").
ANNOTATIONS = {
    -666666666: "too few sample observations for an estimate",
    -999999999: "too few sample observations",
    -888888888: "not applicable",
    -555555555: "the estimate is controlled, it has no sampling error",
    -333333333: "the median lies in an open-ended interval",
    -222222222: "too few sample observations for a margin",
}


def _why(value: float) -> str:
    return ANNOTATIONS.get(int(value), f"annotation value {int(value)}")


def _round(spec: profile.MeasureSpec, value: float) -> int | float:
    return int(round(value)) if spec.unit in ("count", "dollars") else round(value, 2)


def measure(
    spec: profile.MeasureSpec, figure: ProfileFigure, notes: dict[str, list[str]]
) -> Measure:
    """One measure; what is not published goes into `notes` (reason -> measure names)."""
    value, margin = figure.estimate, figure.margin
    lower_bound = False
    if value is not None and value < 0:
        notes[f"no estimate ({_why(value)})"].append(spec.name)
        value = None
    elif value is None:
        notes["no estimate in the Census's answer"].append(spec.name)
    elif spec.name == "median_home_value" and value > profile.HOME_VALUE_TOP_CODE:
        value, lower_bound = profile.HOME_VALUE_TOP_CODE, True
    elif spec.name == "median_home_value" and value < profile.HOME_VALUE_BOTTOM_CODE:
        notes[f"below ${profile.HOME_VALUE_BOTTOM_CODE:,} (the Census's bottom code)"].append(
            spec.name
        )
        value = None
    if value is None:
        margin = None
    elif margin is None or margin < 0:
        if margin is not None:
            notes[f"no margin of error ({_why(margin)})"].append(spec.name)
        margin = None
    return Measure(
        topic=spec.topic,
        name=spec.name,
        value=None if value is None else _round(spec, value),
        unit=spec.unit,
        lower_bound=lower_bound,
        margin_of_error=None if margin is None else round(margin, 2),
        of=spec.of,
    )


def _source(acs: AcsProfile) -> str:
    tables = ", ".join(acs.tables)
    return (
        f"U.S. Census Bureau, ACS 5-year {acs.year - 4}-{acs.year}, data profiles {tables}, "
        "via the Census Data API"
    )


def demographics(
    profiles: CensusProfileApi, census: CensusAcsApi, args: DemographicsArgs
) -> DemographicsResult:
    topics = set(args.topics or TOPICS)
    specs = [m for m in profile.MEASURES if m.topic in topics]
    names = [m.name for m in specs]
    if args.area is not None:
        where = upstream_areas.geography(census, args.area)
        match = where.match
        label = match.name
        geo_for, geo_in = where.geo_for, where.geo_in
    else:
        match, label = None, f"ZIP code {args.postal_code}"
        geo_for, geo_in = f"zip code tabulation area:{args.postal_code}", None
    try:
        acs = profiles.profile(names, geo_for, geo_in)
    except UpstreamStatusError as exc:
        raise NotFound(
            f"No ACS data profile for {label}: the Census API answered {exc.status}"
        ) from exc
    except NotFound:
        raise NotFound(f"No ACS data profile is published for {label}") from None
    notes: dict[str, list[str]] = defaultdict(list)
    answered = [measure(spec, acs.figures[spec.name], notes) for spec in specs]
    if all(m.value is None for m in answered):
        raise NotFound(
            f"No ACS data profile is published for {label} (no residents, or too few "
            "sampled for the survey)"
        )
    warnings = [f"{why}: {', '.join(listed)}" for why, listed in notes.items()]
    common = {
        "measures": answered,
        "year": acs.year,
        "period": f"{acs.year - 4}-{acs.year}",
        "source": _source(acs),
        "dataset": f"census-acs5@{acs.year}/profile",
    }
    if match is None:
        code = args.postal_code
        return DemographicsResult(
            postal_code=code, name=code, area_id=code, warnings=warnings, **common
        )
    others = [area_candidate(c.level, c.name, c.area_id) for c in match.candidates]
    if others:
        listed = "; ".join(f"{c['name']} ({c['level']}, {c['areaId']})" for c in others)
        warnings.append(f"{args.area!r} may also mean: {listed}")
    return DemographicsResult(
        postal_code=None,
        level=match.level,
        name=acs.name,
        area_id=match.area_id,
        state=match.state_code,
        warnings=warnings,
        **common,
    )
