"""What several tools share: the credit note of their descriptions, the places dataset
their examples name, the pieces of their summaries, the demographic tools' batch lists,
describe hook and batch examples, and the one-line summary of a batch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from app.geodata.batch import BatchList
from app.geodata.tools.spec import Describe, ToolSpec
from app.kit.config import Settings

CREDIT = " Costs 1 credit; errors free."
PLACES = "GeoNames (CC BY 4.0), U.S. Census ZCTA 2023, airportsdata (MIT)"
PLACES_DATASET = "places@v7-de24fa46"

STRING = {"type": "string"}
# the demographic tools' batches: a list of ZIP codes or of areas
ZIP_LISTS = (
    BatchList("postal_codes", ("postal_code",), STRING),
    BatchList("areas", ("area",), STRING),
)
# Items of a demographic batch's example: no ZIP code of the US, a ZIP that lost its zero
ZIP_BATCH_ERRORS = (
    (
        {"postal_code": "00000"},
        {
            "status": 404,
            "error": {"code": "NOT_FOUND", "message": "ZIP code 00000 is not a known US ZIP code"},
        },
    ),
    (
        {"postal_code": "2139"},
        {
            "status": 400,
            "error": {
                "code": "INVALID_ARGUMENT",
                "message": 'postal_code: must be a US ZIP code of 5 digits; did you mean "02139"? '
                "(leading zeros may have been lost)",
            },
        },
    ),
)
# get_population's and get_average_income's: circles too
RING_LISTS = (*ZIP_LISTS, BatchList("arounds", ("around",), {"type": "object"}))


def coverage_by_policy(here: Mapping[bool, str], *, upstream_first: bool = False) -> Describe:
    """A describe hook that fills `{coverage}` with what this deployment answers areas
    from: `here[True]` when the upstream answers them (with `upstream_first`, only when
    it goes first: the shipped figures answer otherwise)."""

    def describe(spec: ToolSpec, settings: Settings) -> str:
        chosen = spec.policy(settings)
        if upstream_first:
            upstream = chosen in ("upstream", "upstream-then-embedded")
        else:
            upstream = chosen != "embedded"
        return spec.description.replace("{coverage}", here[upstream])

    return describe


def where(place: dict[str, Any]) -> str:
    return f"{place['label']} ({place['lat']:.5f}, {place['lon']:.5f})"


def km(metres: float) -> str:
    return f"{metres / 1000:.1f} km" if metres >= 1000 else f"{metres:.0f} m"


def zip_place(result: dict[str, Any]) -> str:
    if not result.get("postalCode"):  # an area: its name and level
        return f"{result.get('name')} ({result.get('level')})"
    named = ", ".join(part for part in (result.get("placeName"), result.get("state")) if part)
    return f"ZIP {result['postalCode']}" + (f" ({named})" if named else "")


def ring_notes(result: dict[str, Any]) -> str:
    """A circle's method and warnings (how it was estimated, how far off it may be), for
    the text block a model may read alone."""
    return f" Method: {result.get('method')}. " + " ".join(result.get("warnings") or [])


def other_readings(result: dict[str, Any]) -> str:
    """For the end of an area's summary: the other areas its name could mean, so a host
    that shows a model only the first line still says the answer chose one."""
    others = result.get("candidates") or []
    if result.get("postalCode") or not others:
        return ""
    named = ", ".join(f"{c['name']} ({c['level']})" for c in others[:3])
    more = f" and {len(others) - 3} more" if len(others) > 3 else ""
    return f" Also read as: {named}{more} (see candidates)."


def batch_summary(spec: ToolSpec, body: dict[str, Any]) -> str:
    """A batch (`app.geodata.batch.BatchResult`): the count by outcome, then the gist of
    the answers (`batch_gist`: a population's total, an income's range), else the first
    answer (`batch_item`)."""
    items = body["results"]
    answered = [item["result"] for item in items if item.get("result")]
    errors = Counter(item["error"]["code"] for item in items if item.get("error"))
    text = f"{len(items)} items: {len(answered)} answered ({body['credits']} credits)"
    if errors:
        text += ", " + ", ".join(f"{n} {code}" for code, n in errors.most_common())
    gist = spec.batch_gist(answered) if answered else ""
    if gist:
        text += gist
    elif answered:
        text += f"; first: {(spec.batch_item or spec.summary)(answered[0])}"
    return text + "."
