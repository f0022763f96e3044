"""One line that says what a tool answered: the first line of an MCP result's text block,
before the result itself as JSON (`app.mcp.results`). Each tool's catalogue entry names
its function here (`ToolSpec.summary`); `catalogue.summarize` picks it. The gist for a
person or a model skimming (the figure, the best place, the nearest few); every field is
in the JSON. Works on the dumped (camelCase) result, which is all the api process holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

Summary = Callable[[dict[str, Any]], str]
MORE_PLACES = 3  # further geocode matches or nearby places named after the first


def _where(place: dict[str, Any]) -> str:
    return f"{place['label']} ({place['lat']:.5f}, {place['lon']:.5f})"


def _km(metres: float) -> str:
    return f"{metres / 1000:.1f} km" if metres >= 1000 else f"{metres:.0f} m"


def _zip_place(result: dict[str, Any]) -> str:
    if not result.get("postalCode"):  # an area: its name and level
        return f"{result.get('name')} ({result.get('level')})"
    named = ", ".join(part for part in (result.get("placeName"), result.get("state")) if part)
    return f"ZIP {result['postalCode']}" + (f" ({named})" if named else "")


def population(result: dict[str, Any]) -> str:
    year = result.get("year") or "year not stated"
    return f"{_zip_place(result)}: population {result['population']:,} ({year})."


def income(result: dict[str, Any]) -> str:
    amount = f"${result['amount']:,}" + (" or more" if result.get("lowerBound") else "")
    period = result.get("period") or result["year"]
    return f"{_zip_place(result)}: median household income {amount} ({period})."


_UNITS = {"percent": "%", "dollars": "", "count": "", "years": " years", "minutes": " min"}


def _figure(measure: dict[str, Any]) -> str:
    value, unit = measure["value"], measure["unit"]
    if value is None:
        return f"{measure['name']} n/a"
    text = f"${value:,.0f}" if unit == "dollars" else f"{value:,g}"
    text += _UNITS.get(unit, "") + ("+" if measure.get("lowerBound") else "")
    if measure.get("marginOfError") is not None:
        text += f" ±{measure['marginOfError']:,g}"
    return f"{measure['name']} {text}"


def demographics(result: dict[str, Any]) -> str:
    figures = "; ".join(_figure(m) for m in result["measures"])
    return f"{_zip_place(result)}, ACS {result['period']}: {figures}."


def geocode(result: dict[str, Any]) -> str:
    best, *others = result["results"]
    text = f"{result['query']!r}: {_where(best)}, {best['kind']}, confidence {best['confidence']:g}"
    if result.get("ambiguous"):  # the places that compete, in place of a count
        rivals = "; ".join(_where(place) for place in result["candidates"][1:])
        text += f". Ambiguous: it also names {rivals}. Ask which one is meant"
    elif others:
        text += f"; {len(others)} more"
    if result.get("warnings"):
        text += " (see warnings)"
    return text + "."


def reverse_geocode(result: dict[str, Any]) -> str:
    text = f"In {result['label']} ({result['distanceKm']:g} km from its centre)"
    if result.get("countyFips"):
        text += f"; the point is in {result['admin2']}, {result['admin1']}"
    if result.get("postalCode"):
        basis = result.get("postalCodeBasis")
        text += f", ZIP {result['postalCode']}" + (f" ({basis})" if basis else "")
    candidates = result.get("postalCodeCandidates") or []
    if candidates and not result.get("postalCode"):
        listed = ", ".join(f"{c['code']} {_km(c['distanceM'])}" for c in candidates)
        text += f"; ZIP not known by area, nearest ZIP centres: {listed}"
        if result.get("postalCodeUncertain"):
            text += " (comparably close: uncertain)"
    text += "."
    for warning in result.get("warnings") or []:
        text += f" Note: {warning}."
    return text


def search_nearby(result: dict[str, Any]) -> str:
    places = result["results"]
    total = result.get("total")
    count = f"{total:,}" if total is not None else f"{len(places)}+"
    listed = ", ".join(
        f"{p['name']}" + (f" ({p['code']})" if p.get("code") else "") + f" {_km(p['distanceM'])}"
        for p in places[:MORE_PLACES]
    )
    text = (
        f"{count} places of category {result['category']} within {_km(result['radiusM'])}: {listed}"
    )
    if len(places) > MORE_PLACES:
        text += f" and {len(places) - MORE_PLACES} more on this page"
    text += "."
    if result.get("nextCursor"):
        text += " More: pass nextCursor as cursor."
    return text


def static_map(result: dict[str, Any]) -> str:
    center = result["center"]
    return (
        f"{result['width']}x{result['height']} PNG map of ({center['lat']:.4f}, "
        f"{center['lon']:.4f}) at zoom {result['zoom']} with {result['markers']} marker(s)."
    )


def _item(tool: str, result: dict[str, Any]) -> str:
    if tool == "geocode":
        best = result["results"][0]
        ambiguous = " (ambiguous: see candidates)" if result.get("ambiguous") else ""
        return f"{result['query']!r}: {_where(best)}{ambiguous}"
    if tool == "reverse_geocode":
        return f"{result['label']} ({result['distanceKm']:g} km from its centre)"
    if tool == "get_population":
        return f"{_zip_place(result)} {result['population']:,}"
    if tool == "get_average_income":
        return f"{_zip_place(result)} ${result['amount']:,}" + ("+" if result["lowerBound"] else "")
    return _zip_place(result)


def _population_total(answered: list[dict[str, Any]]) -> str:
    """The population of the answered items, each area counted once; areas of different
    levels may hold one another (a county in its state), which the sum would not see."""
    distinct = {(r.get("level"), r.get("postalCode") or r.get("areaId")): r for r in answered}
    total = sum(r["population"] for r in distinct.values())
    levels = {r.get("level") for r in distinct.values()}
    text = f"; total population {total:,} ({len(distinct)} distinct"
    return text + (", mixed levels: one area may hold another)" if len(levels) > 1 else ")")


def _income_range(answered: list[dict[str, Any]]) -> str:
    """Medians do not add: the lowest and the highest."""
    low = min(answered, key=lambda r: r["amount"])
    high = max(answered, key=lambda r: r["amount"])
    return f"; median household income from {_item('get_average_income', low)} to " + _item(
        "get_average_income", high
    )


def batch(tool: str, body: dict[str, Any]) -> str:
    """A batch (`app.geodata.batch.BatchResult`): the count by outcome, then the gist of
    the answers (a population's total, an income's range), else the first answer."""
    items = body["results"]
    answered = [item["result"] for item in items if item.get("result")]
    errors = Counter(item["error"]["code"] for item in items if item.get("error"))
    text = f"{len(items)} items: {len(answered)} answered ({body['credits']} credits)"
    if errors:
        text += ", " + ", ".join(f"{n} {code}" for code, n in errors.most_common())
    if answered and tool == "get_population":
        text += _population_total(answered)
    elif len(answered) > 1 and tool == "get_average_income":
        text += _income_range(answered)
    elif answered:
        text += f"; first: {_item(tool, answered[0])}"
    return text + "."
