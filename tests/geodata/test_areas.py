"""Reading an area's name (`resolve_area`) and the embedded answers for areas."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import InvalidArgument, NotFound, Unsupported
from app.geodata.areas import resolve_area
from app.geodata.service import execute


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


class TestResolveArea:
    @pytest.mark.parametrize(
        ("text", "level", "area_id"),
        [
            ("Texas", "state", "US-TX"),
            ("tx", "state", "US-TX"),
            ("District of Columbia", "state", "US-DC"),
            ("Travis County, Texas", "county", "48453"),
            ("Orleans Parish, LA", "county", "22071"),
            ("06037", "county", "06037"),
            ("Viet Nam", "country", "VN"),
            ("USA", "country", "US"),
            ("Paris", "city", "Paris, Île-de-France, FR"),
            ("New York", "city", "New York City, New York, US"),
            ("Austin, TX", "city", "Austin, Texas, US"),
        ],
    )
    def test_every_level_and_form(self, text: str, level: str, area_id: str) -> None:
        match = resolve_area(text)
        assert (match.level, match.area_id) == (level, area_id)

    def test_a_county_needs_its_suffix(self) -> None:
        assert resolve_area("Austin, Texas").level == "city"
        assert resolve_area("Austin County, Texas").area_id == "48015"

    def test_namesakes_are_candidates(self) -> None:
        match = resolve_area("Paris")
        assert "Paris, Texas, US" in [c.name for c in match.candidates]

    def test_a_fips_read_says_so(self) -> None:
        assert "postal_code" in resolve_area("10001").warnings[0]

    def test_refusals(self) -> None:
        with pytest.raises(InvalidArgument):
            resolve_area(" ")
        with pytest.raises(NotFound):
            resolve_area("00000")
        with pytest.raises(Unsupported, match="US counties"):
            resolve_area("Bavaria")


class TestEmbeddedAnswers:
    def test_income_of_an_area_is_unsupported_offline_naming_the_census_acs(self) -> None:
        with pytest.raises(Unsupported, match="upstream Census ACS"):
            execute("get_average_income", {"area": "California"})

    def test_income_of_a_zip_says_its_level(self) -> None:
        answer = execute("get_average_income", {"postal_code": "10001"}).structured
        assert (answer["level"], answer["areaId"]) == ("postal_code", "10001")

    def test_exactly_one_of_postal_code_and_area(self) -> None:
        with pytest.raises(InvalidArgument, match="exactly one"):
            execute("get_population", {"postal_code": "10001", "area": "Texas"})
        with pytest.raises(InvalidArgument, match="exactly one"):
            execute("get_population", {})
