"""The Census Data API's ACS 5-year data profiles (`/data/{year}/acs/acs5/profile`) as the
fake upstream serves them: the 2023 release's variable ids of tables DP02-DP05 that
get_demographics asks for, with margins (`...M`, `...PM`), for a few ZCTAs, a state, two
counties, a place and the nation. The figures have the published form (counts, percents to
one decimal, annotation values where the Census publishes no figure) but are written for
the tests, not copied from a release.

The answer is the real wire format: a JSON array of rows, header first (the variables in
the order asked, then the geography's keys); 204 for a geography with no row; 400 with the
Census's error text for an unknown variable or geography.
"""

from __future__ import annotations

from typing import Any

# In this order, the figures of a row below: estimate variable (its margin: E -> M).
VARIABLES = (
    "DP05_0018E",  # median age
    "DP05_0019PE",  # under 18, percent
    "DP05_0024PE",  # 65 and over, percent
    "DP02_0001E",  # households
    "DP02_0016E",  # average household size
    "DP02_0068PE",  # bachelor's degree or higher, percent
    "DP03_0004PE",  # employed, percent of 16 and over
    "DP03_0025E",  # mean travel time to work, minutes
    "DP04_0058PE",  # no vehicles available, percent
    "DP03_0128PE",  # all people below the poverty level, percent
    "DP04_0001E",  # housing units
    "DP04_0046PE",  # owner-occupied, percent
    "DP04_0003PE",  # vacant, percent
    "DP04_0089E",  # median value, owner-occupied units
    "DP05_0037PE",  # White alone
    "DP05_0038PE",  # Black or African American alone
    "DP05_0047PE",  # Asian alone
    "DP05_0039PE",  # American Indian and Alaska Native alone
    "DP05_0055PE",  # Native Hawaiian and Other Pacific Islander alone
    "DP05_0076PE",  # Hispanic or Latino (of any race)
)
NO_ESTIMATE = -666_666_666  # too few sample observations for an estimate
NO_MARGIN = -222_222_222  # too few sample observations for a margin
CONTROLLED = -555_555_555  # a controlled estimate: no sampling margin
OPEN_ENDED = -333_333_333  # a median in an open-ended interval (top-coded)

Row = tuple[tuple[float, float], ...]

SAN_FRANCISCO_94103: Row = (
    (36.9, 1.2),
    (9.1, 1.1),
    (13.0, 1.0),
    (16_950, 560),
    (1.88, 0.05),
    (58.4, 2.1),
    (66.2, 1.6),
    (27.1, 1.3),
    (52.3, 2.4),
    (17.9, 2.0),
    (19_480, 420),
    (12.4, 1.5),
    (13.0, 1.8),
    (1_087_500, 101_200),
    (42.6, 2.3),
    (6.3, 1.0),
    (28.9, 2.0),
    (0.7, 0.4),
    (0.4, 0.3),
    (20.5, 2.1),
)
# Atherton: the median home value is the top code "2,000,000+"
ATHERTON_94027: Row = tuple(
    (2_000_001, OPEN_ENDED) if i == 13 else pair for i, pair in enumerate(SAN_FRANCISCO_94103)
)
NOBODY: Row = tuple((NO_ESTIMATE, NO_MARGIN) for _ in VARIABLES)
TEXAS: Row = (
    (35.6, 0.1),
    (25.3, 0.1),
    (13.4, 0.1),
    (10_796_247, 13_745),
    (2.68, 0.01),
    (32.3, 0.1),
    (61.2, 0.1),
    (26.6, 0.1),
    (5.1, 0.1),
    (13.7, 0.1),
    (12_107_347, CONTROLLED),
    (62.6, 0.2),
    (10.8, 0.1),
    (260_400, 500),
    (49.9, 0.2),
    (12.0, 0.1),
    (5.2, 0.1),
    (0.6, 0.1),
    (0.1, 0.1),
    (40.2, 0.1),
)
TRAVIS: Row = (
    (34.7, 0.2),
    (20.9, 0.1),
    (11.2, 0.1),
    (525_731, 2_511),
    (2.40, 0.02),
    (56.3, 0.5),
    (69.9, 0.4),
    (25.2, 0.2),
    (5.2, 0.2),
    (11.1, 0.4),
    (577_216, CONTROLLED),
    (52.1, 0.6),
    (6.9, 0.4),
    (528_900, 3_600),
    (56.6, 0.7),
    (7.7, 0.3),
    (7.7, 0.2),
    (0.6, 0.1),
    (0.1, 0.1),
    (33.4, 0.1),
)
# Loving County, Texas (some 60 residents): too few sampled for a median home value
LOVING: Row = tuple(
    (NO_ESTIMATE, NO_MARGIN) if i == 13 else (value, NO_MARGIN if i == 0 else margin)
    for i, (value, margin) in enumerate(TRAVIS)
)
AUSTIN: Row = (
    (34.0, 0.2),
    (19.6, 0.2),
    (10.3, 0.1),
    (421_640, 2_100),
    (2.25, 0.02),
    (58.0, 0.5),
    (71.0, 0.4),
    (24.6, 0.2),
    (6.1, 0.3),
    (12.9, 0.4),
    (467_760, 1_900),
    (44.9, 0.6),
    (7.2, 0.4),
    (553_700, 4_800),
    (53.0, 0.7),
    (7.4, 0.3),
    (8.6, 0.3),
    (0.7, 0.1),
    (0.1, 0.1),
    (33.1, 0.5),
)
NATION: Row = (
    (38.7, 0.1),
    (21.9, 0.1),
    (17.3, 0.1),
    (127_482_865, 219_342),
    (2.49, 0.01),
    (36.2, 0.1),
    (60.0, 0.1),
    (26.6, 0.1),
    (8.3, 0.1),
    (12.4, 0.1),
    (143_786_655, CONTROLLED),
    (65.0, 0.1),
    (10.3, 0.1),
    (303_400, 400),
    (63.4, 0.1),
    (12.4, 0.1),
    (5.8, 0.1),
    (0.9, 0.1),
    (0.2, 0.1),
    (19.0, 0.1),
)

# by (for, in): NAME and the row
PROFILES: dict[tuple[str, str], tuple[str, Row]] = {
    ("zip code tabulation area:94103", ""): ("ZCTA5 94103", SAN_FRANCISCO_94103),
    ("zip code tabulation area:94027", ""): ("ZCTA5 94027", ATHERTON_94027),
    ("zip code tabulation area:99999", ""): ("ZCTA5 99999", NOBODY),
    ("us:1", ""): ("United States", NATION),
    ("state:48", ""): ("Texas", TEXAS),
    ("state:13", ""): ("Georgia", TEXAS),  # the figures of a row the tests do not read
    ("county:453", "state:48"): ("Travis County, Texas", TRAVIS),
    ("county:301", "state:48"): ("Loving County, Texas", LOVING),
    ("place:05000", "state:48"): ("Austin city, Texas", AUSTIN),
}


def _margin(variable: str) -> str:
    return variable[:-1] + "M"


def _text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def answer(get: list[str], geo_for: str, geo_in: str) -> tuple[int, Any]:
    """(status, body): the JSON rows, None for 204, or the error text for 400."""
    known = {*VARIABLES, *(_margin(v) for v in VARIABLES), "NAME"}
    unknown = [v for v in get if v not in known]
    if unknown:
        return 400, f"error: unknown variable '{unknown[0]}'"
    kind = geo_for.split(":")[0]
    if kind not in ("zip code tabulation area", "us", "state", "county", "place"):
        return 400, "error: unknown/unsupported geography hierarchy"
    found = PROFILES.get((geo_for, geo_in))
    if found is None:
        return 204, None
    name, row = found
    values: dict[str, str] = {"NAME": name}
    for variable, (estimate, margin) in zip(VARIABLES, row, strict=True):
        values[variable], values[_margin(variable)] = _text(estimate), _text(margin)
    keys = [k.split(":") for k in (geo_in, geo_for) if k]
    header = [*get, *(key for key, _ in keys)]
    return 200, [header, [*(values[v] for v in get), *(code for _, code in keys)]]
