"""Reading an area's name (`resolve_area`) and the embedded answers for areas."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.geodata.areas import resolve_area
from app.geodata.service import execute
from app.kit.errors import InvalidArgument, NotFound, Unsupported


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

    @pytest.mark.parametrize(("code", "state", "country"), [("AZ", "US-AZ", "Azerbaijan"),
                             ("ca", "US-CA", "Canada"), ("DE", "US-DE", "Germany")])  # fmt: skip
    def test_a_usps_code_is_the_state_whichever_has_more_people(
        self, code: str, state: str, country: str
    ) -> None:
        """The examples say 'TX' is a state; 'AZ' was Azerbaijan (more people)."""
        match = resolve_area(code)
        assert match.area_id == state
        assert country in [c.name for c in match.candidates]
        assert f"for the country {country} ask for '{country}'" in match.warnings[-1]

    def test_a_code_that_is_no_state_is_the_country(self) -> None:
        match = resolve_area("VN")
        assert (match.area_id, match.warnings) == ("VN", ())

    @pytest.mark.parametrize(
        ("text", "namesake"),
        [("England", "England, Arkansas, US"), ("Ontario", "Ontario, California, US"),
         ("Scotland", "Scotland, Pennsylvania, US")],
    )  # fmt: skip
    def test_a_region_outside_the_us_is_no_namesake_town_elsewhere(
        self, text: str, namesake: str
    ) -> None:
        """'England' answered England, Arkansas (2,765 people), without a word."""
        with pytest.raises(Unsupported, match="region outside the US") as refused:
            resolve_area(text)
        assert repr(namesake) in str(refused.value)  # how to ask for the town
        assert resolve_area(namesake).area_id == namesake

    def test_a_city_inside_the_region_of_its_name_stays_the_answer(self) -> None:
        assert resolve_area("Quebec").area_id == "Québec, Quebec, CA"
        assert resolve_area("Hamburg").area_id == "Hamburg, Hamburg, DE"

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
    def test_a_country_the_packages_lack_names_the_gazetteer_as_its_dataset(self) -> None:
        """A probe: Taiwan's GeoNames figure said dataset pypopulation."""
        taiwan = execute("get_population", {"area": "Taiwan"}).structured
        assert taiwan["source"].startswith("GeoNames")
        assert taiwan["dataset"].startswith("places@")
        vietnam = execute("get_population", {"area": "Vietnam"}).structured
        assert vietnam["dataset"].startswith("pypopulation@")

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
