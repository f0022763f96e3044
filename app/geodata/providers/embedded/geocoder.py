"""geocode: names to places, ranked by match quality, then population.

Ranking: match quality (ZIP, name in context, name, alternate name) plus prominence
(log10 of the population), so a famous place beats an exact-name hamlet. An alternate
name is a weak match when a place that has the name as its own name outranks it: GeoNames
lists other languages' names, and "Rome" is also an alternate name of Lomé; such a match
comes after every match of a place's own name, with a low confidence. A result that
matched only a less specific part of the query (the town of a street address) says so in
`matched` and has its confidence lowered; results are sorted by confidence.

A query is split at commas into parts, most specific first as in an address
("350 5th Ave, New York, NY 10118"). ZIP codes anywhere in it match first. Then each part
is tried as a name, with the parts after it (or the words after it: "Austin TX") as
context: a country or admin1 that a match must lie in. The leftmost part that matches
gives the main results; later parts add fallbacks ("Nowhere, Texas" still finds Texas,
saying that 'Nowhere' matched nothing: query_kinds.Dropped). A part that matched no name
at all may be a typo (spelling.py); a later part naming a town keeps the places by it
("Camden, London": town_context.py).

When the best matches are several well-known places far apart, the answer says so
(`ambiguous`, `candidates`; the rule is in `ambiguity`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import partial

from app.geodata.indices.store import (
    KIND_ADMIN1,
    KIND_AIRPORT,
    KIND_CITY,
    KIND_COUNTRY,
    Q_CODE,
    Q_NAME,
)
from app.geodata.providers.embedded import (
    ambiguity,
    attribution,
    postal_codes,
    region_context,
    spelling,
    town_context,
)
from app.geodata.providers.embedded.data import GeoData
from app.geodata.providers.embedded.prominence import airport_rank
from app.geodata.providers.embedded.region_context import Context
from app.geodata.text import key_hash, normalize
from app.geodata.tools.geocode import geocode_output
from app.geodata.tools.geocode.geocode_output import Offer
from app.geodata.tools.geocode.query_kinds import (
    Dropped,
    beyond_gazetteer,
    not_found_message,
    partial_warning,
    unsupported_message,
)
from app.geodata.tools.geocode.schemas import (
    GeocodeArgs,
    GeocodeCandidate,
    GeocodeMatch,
    GeocodeResult,
)
from app.kit.errors import InvalidArgument, NotFound, Unsupported

_ZIP = re.compile(r"(?<!\d)(\d{5})(?:-\d{4})?(?!\d)")
MAX_WORDS = 8  # longest place name tried, in words

# base confidence by how a feature matched
ZIP_MATCH = 1.0
NAME_IN_CONTEXT = 0.95
ALTERNATE_IN_CONTEXT = 0.9
NAME = 0.9
ALTERNATE = 0.8
FALLBACK = 0.65  # factor for matches of a less specific part
MISSPELT = 0.75  # factor for a name read with a typo forgiven (spelling.py)
PARTIAL = 0.6  # factor when only part of the query matched (the town of an address)
# Ranking adds PROMINENCE x log10(population): 10x the people outweighs an alternate name
# ("Bombay" is Mumbai, not a hamlet called Bombay; "St. Petersburg" is the Russian one).
PROMINENCE = 0.08
CITY_OVER_AIRPORT = 100_000  # a city this big keeps its name from an airport's bare name
AIRPORT_CODE = 1.0  # base confidence of an airport whose IATA or ICAO code is the query


def _score(base: float, rank: float) -> float:
    return base + PROMINENCE * math.log10(1.0 + rank)


@dataclass
class _Candidate:
    feature: int
    base: float
    rank: float
    matched: str
    zip: bool = False
    alternate: bool = False  # matched one of the place's alternate names, not its name
    weak: bool = False  # an alternate name that a more prominent place has as its own

    @property
    def score(self) -> float:
        # a ZIP code in the query is its most precise known part, whatever the population
        return _score(self.base, self.rank) + (1.0 if self.zip else 0.0)


class Geocoder:
    def __init__(self, data: GeoData) -> None:
        self.data = data
        self.country_codes = set(data.country_by_code)

    def geocode(self, args: GeocodeArgs) -> GeocodeResult:
        country = None
        if args.country is not None:
            if args.country not in self.data.country_by_code:
                raise InvalidArgument(f"country: {args.country!r} is not an ISO 3166-1 code")
            country = self.data.country_by_code[args.country]
        candidates, warnings, dropped = self._candidates(args.query)
        if country is not None:
            candidates = [c for c in candidates if int(self.data.country[c.feature]) == country]
        codes = sorted((c for c in candidates if c.zip), key=lambda c: -c.score)
        if codes and len(codes) == len(candidates):  # a bare code: in several countries?
            ccs = list(dict.fromkeys(self.data.country_code(c.feature) or "?" for c in codes))
            warnings += [postal_codes.several_countries(codes[0].matched, ccs)][: len(ccs) > 1]
        # the most specific part, as a street address or landmark would be written first
        first_part = _ZIP.sub(" ", args.query.split(",")[0]).strip()
        beyond = beyond_gazetteer(first_part)
        if beyond and any(c.zip for c in candidates):  # '1010 Wien': a code and a city
            bare = postal_codes.without_known(self.data, args.query, self.country_codes)
            beyond = beyond_gazetteer(bare.split(",")[0]) and beyond
        if not candidates:
            if beyond:
                raise Unsupported(unsupported_message(args.query, beyond))
            raise NotFound(not_found_message(args.query))
        candidates.sort(key=lambda c: (c.weak, -c.score, c.feature))
        # less prominent namesakes are less likely meant; confidence never rises down the list
        top_rank = max(candidates[0].rank, 1.0)
        scored, ceiling = [], 1.0
        # beyond `limit` too: a place the agent was not shown may still compete
        for c in candidates[: max(args.limit, ambiguity.SCANNED)]:
            share = min(1.0, c.rank / top_rank) if c.rank > 0 and not c.weak else 0.0
            confidence = min(ceiling, c.base * (0.6 + 0.4 * share))
            ceiling = confidence
            scored.append((c, confidence))
        results = [self._output(c, confidence) for c, confidence in scored[: args.limit]]
        # only places confident enough to be listed can compete (most queries: one)
        floor = ambiguity.LISTED * round(scored[0][1], 3)
        contenders = [
            geocode_output.place(self.data, c.feature, c.matched, conf)
            for c, conf in scored
            if round(conf, 3) >= floor
        ]
        competing = [
            GeocodeCandidate.of(results[i] if i < len(results) else self._output(*scored[i]))
            for i in ambiguity.candidates(contenders)
        ]
        best = candidates[0]
        first: list[str] = []  # what of the query was not used, before the rest
        if beyond and (best.matched != args.query or best.alternate):
            partial = best.matched if best.matched != args.query else None
            first.append(partial_warning(first_part, beyond, partial))
        matched = best.matched if best.matched != args.query else None
        first += dropped.notes(matched, normalize(first_part) if first else None)
        if best.zip and (town_only := postal_codes.city_level(self.data, best.feature)):
            first.append(town_only)
        warnings = first + warnings
        return GeocodeResult(
            query=args.query,
            results=results,
            ambiguous=bool(competing),
            candidates=competing,
            warnings=warnings,
            source=attribution.PLACES,
            dataset=attribution.places_dataset(self.data.meta),
        )

    # -- matching -----------------------------------------------------------------------------
    def _candidates(self, query: str) -> tuple[list[_Candidate], list[str], Dropped]:
        """The places a query may mean, warnings naming the postal codes not used, and the
        parts that matched nothing."""
        found: dict[int, _Candidate] = {}
        matched = query

        def offer(
            feature: int,
            base: float,
            rank: float,
            zip_code: bool = False,
            weak: bool = False,
            alternate: bool = False,
            as_matched: str | None = None,
        ) -> None:
            text = matched if as_matched is None else as_matched
            if int(self.data.kind[feature]) == KIND_AIRPORT:
                rank = max(rank, airport_rank(self.data.airport_prominence_of(feature)))
            if text != query:
                base *= PARTIAL
            current = found.get(feature)
            if current is None or (not weak, base, rank) > (
                not current.weak,
                current.base,
                current.rank,
            ):
                found[feature] = _Candidate(feature, base, rank, text, zip_code, alternate, weak)

        codes = [
            postal_codes.held_form(self.data, t)
            for t in postal_codes.tokens(query, self.country_codes)
        ]
        hits = [(t, f) for t in codes for f in postal_codes.features_of(self.data, t.key)]
        text = postal_codes.without(query, list(dict.fromkeys(t for t, _f in hits)))
        raw = [part.strip() for part in query.split(",")]
        stripped = [normalize(part) for part in text.split(",")]
        raw = [r for r, part in zip(raw, stripped, strict=True) if part]
        parts = [part for part in stripped if part]
        # an airport's own IATA or ICAO code, alone or with 'airport': the airport first
        code = normalize(query).removesuffix(" airport")
        if len(code) in (3, 4) and code.isalnum():
            for feature, quality in self.data.lookup_key(key_hash(code)):
                if int(self.data.kind[feature]) == KIND_AIRPORT and (
                    quality == Q_CODE or self.data.codes[feature].lower() == code
                ):
                    offer(feature, AIRPORT_CODE, 0.0, as_matched=query)
        fallback = False
        dropped = Dropped()
        for i, part in enumerate(parts):
            # the whole query matched when its first part did (and it held no postal code)
            matched = query if i == 0 and not hits else ", ".join(raw[i:])
            context = [
                c
                for c in (region_context.named_region(self.data, p) for p in parts[i + 1 :])
                if c is not None
            ]
            if self._match_part(part, context, fallback, offer):
                fallback = True
            elif not (fallback or hits) and self._misspelt(part, raw[i], context, offer, dropped):
                fallback = True
            elif not fallback:  # nothing matched yet: this part is not in the answer
                dropped.add(raw[i], before_match=True)
            elif region_context.named_region(self.data, part) is None and not self._in_town(
                part, found
            ):
                dropped.add(raw[i], before_match=False)  # a region's name narrowed those before
        warnings = self._offer_postal(query, hits, found, parts, offer)
        return list(found.values()), warnings, dropped

    def _offer_postal(
        self,
        query: str,
        hits: list[tuple[postal_codes.Token, int]],
        found: dict[int, _Candidate],
        parts: list[str],
        offer: Offer,
    ) -> list[str]:
        """Offer the postal codes that the places named with them confirm (all of them when
        no place is named): a code never outranks a place named in the same query that it
        does not lie in. Returns warnings for the parts not used."""
        places = sorted((c for c in found.values() if not c.weak), key=lambda c: -c.score)
        tokens = list(dict.fromkeys(t for t, _f in hits))
        address = beyond_gazetteer(postal_codes.without(query, tokens).split(",")[0]) is not None
        # a confirmed code ranks like the place that confirms it: '28050 Madrid' is the
        # Spanish code (Madrid, Spain), not the Mexican one (a village called Madrid)
        support: dict[int, float] = {}
        for _t, f in hits:
            ranks = [c.rank for c in places if postal_codes.confirms(self.data, c.feature, f)]
            if ranks:
                support[f] = max(ranks)
        confirmed = [(t, f) for t, f in hits if f in support]
        offered = confirmed if places else hits
        for token, feature in offered:
            whole = normalize(query) == normalize(token.text) or (bool(confirmed) and not address)
            rank = support.get(feature) or postal_codes.rank(self.data, feature)
            text = query if whole else token.text
            offer(feature, ZIP_MATCH, rank, zip_code=True, as_matched=text)
        used = {t for t, _f in offered}
        warnings = [w for t in dict.fromkeys(used) if (w := postal_codes.coarser(t)) is not None]
        if not address:
            for token in tokens:
                if token not in used and places:
                    label = self.data.label(places[0].feature)
                    warnings.append(postal_codes.unused_code(token, label))
            if not places and offered and parts:
                warnings.append(postal_codes.unused_text(offered[0][0], " ".join(parts)))
        return warnings

    def _match_part(self, part: str, context: list[Context], fallback: bool, offer: Offer) -> bool:
        words = part.split()[:MAX_WORDS]
        for k in range(len(words), 0, -1):
            name, rest = " ".join(words[:k]), " ".join(words[k:])
            constraints = list(context)
            if rest:
                inline = region_context.named_region(self.data, rest)
                if inline is None:
                    continue
                constraints.insert(0, inline)
            if self._match_name(name, constraints, fallback, offer):
                return True
        return False

    def _in_town(self, town: str, found: dict[int, _Candidate]) -> bool:
        """Whether some places found lie in or by a town called `town` ('Camden, London'):
        the others are then dropped, as a region drops those outside it (town_context.py)."""
        places = [f for f in found if not found[f].zip]
        near = town_context.near_towns(self.data, town, places)
        for feature in places if near else []:
            if feature not in near:
                del found[feature]
        return bool(near)

    def _misspelt(
        self, part: str, raw: str, context: list[Context], offer: Offer, dropped: Dropped
    ) -> bool:
        """Offer the places whose name is a typo away from the part's (spelling.py), with
        the rest of the part as context as in _match_part ('Philadelpia PA')."""
        if beyond_gazetteer(part):
            return False
        words = part.split()[:MAX_WORDS]
        for k in range(len(words), 0, -1):
            name, rest = " ".join(words[:k]), " ".join(words[k:])
            inline = region_context.named_region(self.data, rest) if rest else None
            if rest and inline is None:
                continue
            constraints = [inline, *context] if inline is not None else context
            within = (
                partial(region_context.inside_all, self.data, constraints) if constraints else None
            )
            features = spelling.corrections(self.data, name, within)
            base = (NAME_IN_CONTEXT if constraints else NAME) * MISSPELT
            for feature in features:
                offer(feature, base, float(self.data.population[feature]))
            if features:
                read = list(dict.fromkeys(self.data.names[f] for f in features))
                written = raw.split()  # the name as written, without an inline region
                dropped.corrected(
                    " ".join(written[:k]) if len(written) == len(words) else raw, read
                )
                return True
        return False

    def _match_name(self, name: str, context: list[Context], fallback: bool, offer: Offer) -> bool:
        """Offer the features called `name` that lie in every context. A fallback part (one
        after the part that matched) only adds the subdivisions and countries it names."""
        data = self.data
        hits = [(f, q) for f, q in data.lookup_key(key_hash(name)) if q < Q_CODE]
        if fallback:
            hits = [(f, q) for f, q in hits if int(data.kind[f]) in (KIND_ADMIN1, KIND_COUNTRY)]
        if context:
            hits = [(f, q) for f, q in hits if region_context.inside_all(self.data, context, f)]
        # an airport's bare name never hides a city of that name ('Frankfurt', 'Naples')
        if "airport" not in name.split() and any(
            int(data.kind[f]) == KIND_CITY and int(data.population[f]) >= CITY_OVER_AIRPORT
            for f, _q in hits
        ):
            hits = [(f, q) for f, q in hits if int(data.kind[f]) != KIND_AIRPORT]
        if not hits:
            return False
        scores: dict[int, tuple[float, float]] = {}
        for feature, quality in hits:
            if context:
                base = NAME_IN_CONTEXT if quality == Q_NAME else ALTERNATE_IN_CONTEXT
            else:
                base = NAME if quality == Q_NAME else ALTERNATE
            rank = float(data.population[feature])
            if int(data.kind[feature]) == KIND_AIRPORT:
                rank = airport_rank(data.airport_prominence_of(feature))
            scores[feature] = (base * (FALLBACK if fallback else 1.0), rank)
        # an admin1 yields to a namesake city inside it: 'New York' is the city first
        for feature, _quality in hits:
            if int(data.kind[feature]) != KIND_ADMIN1:
                continue
            namesakes = [
                scores[f]
                for f, _q in hits
                if int(data.kind[f]) == KIND_CITY
                and int(data.admin1[f]) == int(data.admin1[feature])
            ]
            if namesakes:
                base, rank = max(namesakes)
                scores[feature] = min(scores[feature], (base, rank * 0.99))
        named = {f for f, q in hits if q == Q_NAME}
        scored = {f: _score(*pair) for f, pair in scores.items()}
        weak = geocode_output.outranked_alternates(self.data, name, hits, scored)
        for feature, (base, rank) in scores.items():
            offer(feature, base, rank, weak=feature in weak, alternate=feature not in named)
        return True

    def _output(self, candidate: _Candidate, confidence: float) -> GeocodeMatch:
        return geocode_output.match(self.data, candidate.feature, candidate.matched, confidence)
