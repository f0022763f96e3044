"""geocode's answer for one matched feature: how it is offered (Offer), a result
(GeocodeMatch) or what the ambiguity rule reads of it (ambiguity.Place); and which
alternate-name matches rank last."""

from __future__ import annotations

from typing import Protocol

from app.geodata.indices.store import (
    KIND_ADMIN1,
    KIND_AIRPORT,
    KIND_CITY,
    KIND_COUNTRY,
    KIND_POSTAL,
    Q_NAME,
)
from app.geodata.providers.embedded import ambiguity
from app.geodata.providers.embedded.data import GeoData
from app.geodata.results import Kind
from app.geodata.text import normalize
from app.geodata.tools.geocode.schemas import GeocodeMatch


class Offer(Protocol):
    """How geocoder._candidates takes a feature as a possible answer."""

    def __call__(
        self,
        feature: int,
        base: float,
        rank: float,
        zip_code: bool = False,
        weak: bool = False,
        alternate: bool = False,
        as_matched: str | None = None,
    ) -> None: ...


KINDS: dict[int, Kind] = {
    KIND_CITY: "city",
    KIND_ADMIN1: "admin1",
    KIND_COUNTRY: "country",
    KIND_POSTAL: "postal_code",
    KIND_AIRPORT: "poi",
}
# kinds whose `population` counts their own residents (an admin1 ranks like its largest
# place, which is not its population)
PEOPLED = (KIND_CITY, KIND_COUNTRY)


def place(data: GeoData, feature: int, matched: str, confidence: float) -> ambiguity.Place:
    return ambiguity.Place(
        round(confidence, 3),
        float(data.lat[feature]),
        float(data.lon[feature]),
        KINDS[int(data.kind[feature])],
        int(data.country[feature]),
        int(data.admin1[feature]),
        matched,
    )


def match(data: GeoData, feature: int, matched: str, confidence: float) -> GeocodeMatch:
    kind = int(data.kind[feature])
    return GeocodeMatch(
        name=data.names[feature],
        label=data.label(feature),
        lat=float(data.lat[feature]),
        lon=float(data.lon[feature]),
        kind=KINDS[kind],
        country_code=data.country_code(feature),
        admin1=data.admin1_name(feature),
        postal_code=data.names[feature] if kind == KIND_POSTAL else None,
        population=int(data.population[feature]) if kind in PEOPLED else None,
        type=data.airport_class(feature)[0] if kind == KIND_AIRPORT else None,
        confidence=round(confidence, 3),
        matched=matched,
    )


def outranked_alternates(
    data: GeoData, name: str, hits: list[tuple[int, int]], scores: dict[int, float]
) -> set[int]:
    """Alternate-name matches that a more prominent place has as its own name: most are
    other languages' names of other places ('Rome' is an alternate name of Lomé). Not
    outranked: a place's own name shortened ('Newcastle' for Newcastle upon Tyne), and
    a region by a city inside it ('Seoul' is also the region's name)."""
    own = [(f, scores[f]) for f, quality in hits if quality == Q_NAME]
    if not own:
        return set()
    best_own = max(score for _f, score in own)
    weak = set()
    for feature, quality in hits:
        score = scores[feature]
        if quality == Q_NAME or score >= best_own:
            continue
        if int(data.kind[feature]) == KIND_ADMIN1:
            region = int(data.admin1[feature])
            if all(score >= s for f, s in own if int(data.admin1[f]) != region):
                continue
        if normalize(data.names[feature]).startswith(name + " "):
            continue
        weak.add(feature)
    return weak
