"""Which row of our admin1 table (GeoNames) a Natural Earth admin-1 unit is tied to
(indices/admin1_build.match_admin1): names and codes each mislead somewhere."""

from __future__ import annotations

from typing import Any

from app.geodata.indices.admin1_build import match_admin1
from app.geodata.text import normalize

ROWS = {
    ("RU", "Moskva"): ("RU.48", ["Moscow"]),
    ("RU", "Moskovskaya oblast'"): ("RU.47", []),
    ("FR", "Nouvelle-Aquitaine"): ("FR.75", []),
    ("FR", "Île-de-France"): ("FR.11", []),
    ("VN", "Hà Nội"): ("VN.44", []),
    ("VN", "Quảng Trị"): ("VN.64", []),
    ("GB", "England"): ("GB.ENG", []),
}


def tables() -> tuple[dict[str, int], dict[tuple[str, str], int], list[str]]:
    by_geonames: dict[str, int] = {}
    by_name: dict[tuple[str, str], int] = {}
    names = []
    for i, ((country, name), (code, aliases)) in enumerate(ROWS.items()):
        by_geonames[code] = i
        names.append(name)
        for spelling in (name, *aliases):
            by_name.setdefault((country, normalize(spelling)), i)
    return by_geonames, by_name, names


def tied(**properties: Any) -> str | None:
    by_geonames, by_name, names = tables()
    row = match_admin1(properties, by_geonames, by_name)
    return names[row] if row >= 0 else None


def test_the_code_wins_when_a_name_agrees() -> None:
    # Moscow Oblast's English name is Moscow's: its GeoNames code and name decide
    oblast = tied(
        iso_a2="RU",
        name="Moskovskaya",
        name_en="Moscow",
        gn_name="Moskovskaya Oblast'",
        gn_a1_code="RU.47",
    )
    assert oblast == "Moskovskaya oblast'"


def test_the_own_name_wins_over_a_wrong_code() -> None:
    assert tied(iso_a2="VN", name="Hà Nội", gn_a1_code="VN.64") == "Hà Nội"


def test_french_departments_go_to_their_region_not_to_a_colliding_code() -> None:
    # Paris is department 75; FR.75 is Nouvelle-Aquitaine in GeoNames
    assert tied(iso_a2="FR", name="Paris", gn_a1_code="FR.75", region="Île-de-France") == (
        "Île-de-France"
    )


def test_uk_counties_go_to_their_constituent_country() -> None:
    kent = tied(
        iso_a2="GB", name="Kent", gn_a1_code="GB.G5", region="South East", geonunit="England"
    )
    assert kent == "England"


def test_a_unit_of_ours_nowhere_is_dropped() -> None:
    assert tied(iso_a2="PH", name="Nowhere", gn_a1_code="PH.99") is None
