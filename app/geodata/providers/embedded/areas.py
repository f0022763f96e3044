"""Which area a free-text name means: a US state ("Texas", "TX"), a US county ("Travis
County, Texas", or its 5-digit FIPS code), a country ("Vietnam", "VN") or a city
("Lyon, France", "Austin, TX").

The rule: every reading of the text is collected (a state, a county, a country, a city),
and the most populous one answers; the others are its `candidates`, so an agent can say
which one it chose ("Georgia": the US state, or the country). A county needs its suffix
("County", "Parish", "Borough", ...) or its FIPS code: "Austin, TX" is the city, not
Austin County. A city is read only when the gazetteer matches the whole text, never a
part of it, and never a ZIP code: a figure always belongs to the area named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from app.geodata.providers.embedded import area_data
from app.geodata.providers.embedded.area_data import AreaTables, UsArea
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.geocoder import Geocoder
from app.geodata.text import normalize
from app.geodata.tools.geocode.schemas import GeocodeArgs
from app.kit.errors import InvalidArgument, NotFound, Unsupported

AreaLevel = Literal["city", "county", "state", "country"]

CITY_SOURCE = "GeoNames (CC BY 4.0), city proper; GeoNames states no year"
CITY_WARNING = (
    "The population is GeoNames' figure for the city proper (not its metro area); "
    "GeoNames states no year or source for it, so `year` is null."
)
COVERAGE = "US states, US counties (name with 'County', or 5-digit FIPS), countries and cities"
_COUNTY_SUFFIXES = (
    "county",
    "parish",
    "borough",
    "census area",
    "municipality",
    "city and borough",
    "city",
)
_US_NAMES = {"us", "usa", "united states", "united states of america", "u s", "u s a"}
MAX_CANDIDATES = 5


@dataclass(frozen=True)
class AreaCandidate:
    level: AreaLevel
    name: str
    area_id: str


@dataclass(frozen=True)
class AreaMatch:
    """The area a name means, with the population figure shipped for it (None: none)."""

    level: AreaLevel
    name: str
    area_id: str  # state: ISO 3166-2 ("US-TX"); county: FIPS; country: ISO alpha-2; city: label
    country_code: str | None
    population: int | None
    year: int | None
    source: str
    state_fips: str | None = None
    county_fips: str | None = None
    state_code: str | None = None  # USPS code of a US state, county or city
    city: str | None = None  # a city's own name
    candidates: tuple[AreaCandidate, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    from_gazetteer: bool = False  # the figure is GeoNames' (a city's; a country's fallback)

    @property
    def candidate(self) -> AreaCandidate:
        return AreaCandidate(self.level, self.name, self.area_id)


def _state(area: UsArea) -> AreaMatch:
    return AreaMatch(
        level="state",
        name=area.name,
        area_id=f"US-{area.usps}",
        country_code="US",
        population=area.population,
        year=area_data.ESTIMATE_YEAR,
        source=area_data.STATES_SOURCE,
        state_fips=area.state_fips,
        state_code=area.usps,
    )


def _county(area: UsArea) -> AreaMatch:
    return AreaMatch(
        level="county",
        name=f"{area.name}, {area.state_name}",
        area_id=area.fips,
        country_code="US",
        population=area.population,
        year=area_data.ESTIMATE_YEAR,
        source=area_data.STATES_SOURCE,
        state_fips=area.state_fips,
        county_fips=area.county_fips,
        state_code=area.usps,
    )


class AreaResolver:
    def __init__(self, data: GeoData, geocoder: Geocoder) -> None:
        self.data = data
        self.geocoder = geocoder
        self._tables: AreaTables | None = None
        self._states: dict[str, UsArea] = {}
        self._counties: dict[str, list[UsArea]] = {}
        self._countries: dict[str, str] = {}

    def tables(self) -> AreaTables:
        if self._tables is None:
            tables = area_data.tables()
            for state in tables.states.values():
                self._states[normalize(state.name)] = state
                self._states[state.usps.lower()] = state
            for county in tables.counties.values():
                self._counties.setdefault(normalize(county.name), []).append(county)
            for row in self.data.countries:
                self._countries[normalize(row["name"])] = row["code"]
                self._countries[row["code"].lower()] = row["code"]
                self._countries[str(row.get("iso3", "")).lower()] = row["code"]
            for figure in tables.countries.values():
                self._countries.setdefault(normalize(figure.name), figure.code)
            self._tables = tables
        return self._tables

    # -- one reading per level ----------------------------------------------------------------

    def country(self, code: str) -> AreaMatch:
        figure = self.tables().countries.get(code)
        row = self.data.countries[self.data.country_by_code[code]]
        population: int | None
        if figure is not None:
            population, year, source = figure.population, area_data.COUNTRY_YEAR, None
        else:
            population, year = (int(row.get("population") or 0) or None), None
            source = "GeoNames (CC BY 4.0); GeoNames states no year"
        return AreaMatch(
            level="country",
            name=row["name"],
            area_id=code,
            country_code=code,
            population=population,
            year=year,
            source=source or area_data.COUNTRIES_SOURCE,
            from_gazetteer=source is not None,
        )

    def _counties_named(self, head: str, state: UsArea | None) -> list[AreaMatch]:
        name = normalize(head)
        if not any(name.endswith(" " + suffix) for suffix in _COUNTY_SUFFIXES):
            return []
        found = self._counties.get(name, [])
        return [_county(c) for c in found if state is None or c.state_fips == state.state_fips]

    def _cities(self, text: str) -> tuple[list[AreaMatch], str | None, list[str]]:
        """The cities (and countries, by their other names) the gazetteer reads the whole
        text as; the kind of its top answer when that is no area this tool covers (a
        region outside the US, an airport); and when it is such a region, the labels of
        the namesake cities outside it, left out: 'England' is not England, Arkansas."""
        try:
            answer = self.geocoder.geocode(GeocodeArgs(query=text, limit=5))
        except (NotFound, Unsupported):
            return [], None, []
        first = normalize(text.split(",")[0])
        top = answer.results[0]
        region = top if top.kind == "admin1" and top.country_code != "US" else None
        found: list[AreaMatch] = []
        namesakes: list[str] = []
        for rank, match in enumerate(answer.results):
            whole = match.matched in (None, text)
            if match.kind == "country" and whole and match.country_code:
                if match.country_code in self.data.country_by_code:
                    found.append(self.country(match.country_code))
                continue
            # the top answer may match by another name ('Bombay'); the others only by theirs
            if match.kind != "city" or not whole or (rank and normalize(match.name) != first):
                continue
            if region is not None and not (
                match.country_code == region.country_code
                and normalize(match.admin1 or "") == normalize(region.name)
            ):  # a city inside the region is its namesake (Québec in Quebec): it stays
                namesakes.append(match.label)
                continue
            us = match.country_code == "US"
            state = self._states.get(normalize(match.admin1 or "")) if us else None
            found.append(
                AreaMatch(
                    level="city",
                    name=match.label,
                    area_id=match.label,
                    country_code=match.country_code,
                    population=match.population or None,
                    year=None,
                    source=CITY_SOURCE,
                    state_fips=state.state_fips if state else None,
                    state_code=state.usps if state else None,
                    city=match.name,
                    warnings=(CITY_WARNING,),
                    from_gazetteer=True,
                )
            )
        other = top.kind if top.kind in ("admin1", "poi", "address") else None
        return found, other, namesakes

    # -- the text -----------------------------------------------------------------------------

    def resolve(self, text: str) -> AreaMatch:
        tables = self.tables()
        text = " ".join(text.split())
        if not text:
            raise InvalidArgument("area: must not be blank")
        if re.fullmatch(r"[0-9]{5}", text):
            county = tables.counties.get(text)
            if county is None:
                raise NotFound(
                    f"No US county has the FIPS code {text} (a ZIP code goes in `postal_code`)"
                )
            warning = f"{text} read as a county's FIPS code; a ZIP code goes in `postal_code`"
            return replace(_county(county), warnings=(warning,))
        if re.fullmatch(r"[0-9]{2}", text) and text in tables.states:
            return _state(tables.states[text])
        parts = [p.strip() for p in text.split(",") if p.strip()]
        found: list[AreaMatch] = []
        if parts and normalize(parts[-1]) in _US_NAMES and len(parts) > 1:
            parts = parts[:-1]  # "Texas, USA"
        whole = normalize(", ".join(parts))
        if len(parts) == 1:
            if whole in self._states:
                found.append(_state(self._states[whole]))
            if whole in self._countries:
                found.append(self.country(self._countries[whole]))
            found += self._counties_named(parts[0], None)
        elif len(parts) == 2 and normalize(parts[1]) in self._states:
            found += self._counties_named(parts[0], self._states[normalize(parts[1])])
        other: str | None = None
        namesakes: list[str] = []
        if not any(m.level == "county" for m in found):
            seen = {m.area_id for m in found}
            cities, other, namesakes = self._cities(text)
            found += [m for m in cities if m.area_id not in seen]
        if not found and other is not None:
            what = "a region outside the US" if other == "admin1" else "not an area"
            also = ", ".join(repr(label) for label in namesakes[:MAX_CANDIDATES])
            hint = f"; cities of that name, asked for by their label: {also}" if also else ""
            raise Unsupported(f"{text!r} is {what}; areas covered: {COVERAGE}{hint}")
        if not found:
            raise NotFound(
                f"No area matches {text!r}; areas are {COVERAGE} (e.g. 'Texas', 'TX', "
                "'Travis County, Texas', '48453', 'Vietnam', 'VN', 'Lyon, France')"
            )
        found.sort(key=lambda m: -(m.population or 0))
        best = found[0]
        code = parts[0].upper() if len(parts) == 1 and len(parts[0]) == 2 else None
        state = self._states.get(code.lower()) if code else None
        country = next((m for m in found if m.level == "country"), None)
        if code and state is not None and country is not None:
            # the examples promise 'TX' is a state: a USPS code reads as one, whichever
            # reading has more people ('AZ' is Arizona, not Azerbaijan); the country stays
            # a candidate, and the warning says how to ask for it
            best = next(m for m in found if m.level == "state")
            reading = f"{code!r} read as the US state {state.name} (its USPS code); for the "
            warning = reading + f"country {country.name} ask for {country.name!r}"
            best = replace(best, warnings=(*best.warnings, warning))
        # as in geocode, a state yields to a namesake city inside it: 'New York' is the city
        namesake = [
            m
            for m in found
            if best.level == "state"
            and m.level == "city"
            and m.state_fips == best.state_fips
            and normalize(m.city or "").startswith(normalize(best.name))
        ]
        best = namesake[0] if namesake else best
        others = [m for m in found if m.area_id != best.area_id]
        candidates = tuple(m.candidate for m in others[:MAX_CANDIDATES])
        return replace(best, candidates=candidates)
