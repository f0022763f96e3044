from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.geodata.reference import tool_reference
from app.geodata.service import TOOL_SPECS, validate_arguments
from app.kit.errors import InvalidArgument, NotFound
from app.mcp.host_views import tools_document


def invalid(name: str, arguments: dict[str, object]) -> str:
    with pytest.raises(InvalidArgument) as caught:
        validate_arguments(name, arguments)
    return caught.value.message


class TestToolSpecs:
    def test_seven_tools_with_descriptions_for_agents(self) -> None:
        assert set(TOOL_SPECS) == {
            "get_population",
            "get_average_income",
            "get_demographics",
            "geocode",
            "reverse_geocode",
            "search_nearby",
            "static_map",
        }
        for spec in TOOL_SPECS.values():
            assert "1 credit" in spec.description
            assert spec.args_model.model_json_schema()["additionalProperties"] is False

    def test_every_result_field_has_a_description_and_a_clean_title(self) -> None:
        def fields(schema: dict, defs: dict, path: str) -> Iterator[tuple[str, dict]]:
            for name, prop in schema.get("properties", {}).items():
                yield f"{path}.{name}", prop
                for ref in (prop.get("$ref"), prop.get("items", {}).get("$ref")):
                    if ref:
                        yield from fields(defs[ref.rsplit("/", 1)[1]], defs, f"{path}.{name}")

        for spec in TOOL_SPECS.values():
            schema = spec.result_model.model_json_schema(by_alias=True, mode="serialization")
            for path, prop in fields(schema, schema.get("$defs", {}), spec.name):
                assert prop.get("description"), path
                title = prop.get("title", "")
                assert title, path
                name = path.rsplit(".", 1)[1]
                if name != name.lower():  # camelCase words must not run together: "Postalcode"
                    assert " " in title, (path, title)
        radius = TOOL_SPECS["search_nearby"].result_model.model_json_schema(by_alias=True)
        assert radius["properties"]["radiusM"]["title"] == "Radius (metres)"
        postal = TOOL_SPECS["get_population"].result_model.model_json_schema(by_alias=True)
        assert postal["properties"]["postalCode"]["title"] == "Postal code"

    def test_unknown_tool_is_not_found(self) -> None:
        with pytest.raises(NotFound, match="Unknown tool"):
            validate_arguments("teleport", {})

    def test_an_unknown_argument_names_the_listed_ones_and_the_batch_lists(self) -> None:
        with pytest.raises(InvalidArgument) as refused:
            validate_arguments("get_population", {"postal_code": "94103", "zip": "94103"})
        # `country` is accepted from older clients but not listed, so not offered either
        assert str(refused.value) == (
            "zip: is not a known argument (known: postal_code, area, around, within, "
            "postal_codes, areas, arounds)"
        )


class TestZipArguments:
    def test_normalised_with_defaults(self) -> None:
        assert validate_arguments("get_population", {"postal_code": " 94103-1234 "}) == {
            "postal_code": "94103",
            "area": None,
            "country": "US",
            "around": None,
            "within": None,
        }

    @pytest.mark.parametrize(
        ("sent", "read"),
        [(94103, "94103"), (941031234, "94103"), ("941031234", "94103"), ("94103 1234", "94103")],
    )
    def test_forms_with_one_reading_are_accepted(self, sent: object, read: str) -> None:
        assert validate_arguments("get_population", {"postal_code": sent})["postal_code"] == read

    @pytest.mark.parametrize(
        ("sent", "guess"),
        [("2139", "02139"), (2139, "02139"), ("501", "00501"), (21391234, "02139-1234")],
    )
    def test_a_lost_leading_zero_is_suggested_not_guessed(self, sent: object, guess: str) -> None:
        message = invalid("get_population", {"postal_code": sent})
        assert message.startswith("postal_code:")
        assert f'did you mean "{guess}"?' in message

    def test_a_fraction_is_not_a_zip(self) -> None:
        message = invalid("get_population", {"postal_code": 94103.5})
        assert message.startswith("postal_code:")
        assert "string" in message
        assert "number" in message

    @pytest.mark.parametrize("code", ["941033", "ABCDE", "", "94 103", "9410-1234", True])
    def test_malformed_zip(self, code: object) -> None:
        assert "postal_code:" in invalid("get_average_income", {"postal_code": code})

    def test_only_us(self) -> None:
        assert invalid("get_population", {"postal_code": "10001", "country": "FR"}).startswith(
            "country:"
        )

    def test_missing_and_unknown_fields(self) -> None:
        assert invalid("get_population", {}).startswith(
            "arguments: give exactly one of postal_code (a US ZIP code), area"
        )
        assert invalid("get_population", {}).endswith("and within (a bbox or polygon)")
        message = invalid("get_population", {"postal_code": "10001", "zip": "1"})
        assert message.startswith("zip: is not a known argument")


class TestCoordinates:
    @pytest.mark.parametrize(
        ("field", "value", "expected"),
        [
            ("lat", 90.0001, "at most 90"),
            ("lat", -91, "at least -90"),
            ("lon", 180.5, "at most 180"),
            ("lon", -181, "at least -180"),
            ("lat", math.nan, "finite"),
            ("lon", math.inf, "finite"),
            ("lat", "48.8", "must be a number"),
            ("lat", True, "must be a number"),
        ],
    )
    def test_out_of_range_or_not_a_number(self, field: str, value: object, expected: str) -> None:
        arguments: dict[str, object] = {"lat": 10.0, "lon": 10.0, field: value}
        message = invalid("reverse_geocode", arguments)
        assert message.startswith(f"{field}:")
        assert expected in message

    def test_integers_are_numbers(self) -> None:
        assert validate_arguments("reverse_geocode", {"lat": 0, "lon": 180}) == {
            "lat": 0.0,
            "lon": 180.0,
        }


class TestSearchNearbyArguments:
    def test_defaults(self) -> None:
        assert validate_arguments("search_nearby", {"lat": 1.0, "lon": 2.0}) == {
            "lat": 1.0,
            "lon": 2.0,
            "radius_m": 5000.0,
            "category": "city",
            "limit": 10,
            "order": "prominence",
            "cursor": None,
        }

    @pytest.mark.parametrize(
        ("arguments", "expected"),
        [
            ({"radius_m": 50_001}, "radius_m: must be at most 50000"),
            ({"radius_m": 0}, "radius_m: must be at least 1"),
            ({"radius_m": math.inf}, "radius_m: must be a finite number"),
            ({"limit": 51}, "limit: must be at most 50"),
            ({"limit": 2.5}, "limit: must be an integer"),
            (
                {"category": "Bad Category"},
                "category: must be 'city', 'airport', 'postal_code', 'hospital'",
            ),
        ],
    )
    def test_limits(self, arguments: dict[str, object], expected: str) -> None:
        assert invalid("search_nearby", {"lat": 1.0, "lon": 2.0, **arguments}).startswith(expected)


class TestGeocodeArguments:
    def test_query_length(self) -> None:
        assert invalid("geocode", {"query": ""}) == "query: must not be empty"
        assert invalid("geocode", {"query": "   "}) == "query: must not be blank"
        assert "256 characters" in invalid("geocode", {"query": "x" * 257})

    def test_country_code_and_limit(self) -> None:
        assert validate_arguments("geocode", {"query": "Paris", "country": "fr"})["country"] == "FR"
        assert invalid("geocode", {"query": "Paris", "country": "FRA"}).startswith("country:")
        assert invalid("geocode", {"query": "Paris", "limit": 11}).startswith("limit:")


class TestStaticMapArguments:
    def test_needs_something_to_show(self) -> None:
        assert "center" in invalid("static_map", {})

    def test_size_limits(self) -> None:
        center = {"lat": 0.0, "lon": 0.0}
        assert invalid("static_map", {"center": center, "width": 63}).startswith("width:")
        assert invalid("static_map", {"center": center, "height": 1281}).startswith("height:")
        assert invalid("static_map", {"center": center, "zoom": 19}).startswith("zoom:")

    def test_marker_count_label_and_colour(self) -> None:
        markers = [{"lat": 0.0, "lon": float(i)} for i in range(51)]
        assert invalid("static_map", {"markers": markers}) == "markers: at most 50 items allowed"
        long_label = [{"lat": 0.0, "lon": 0.0, "label": "x" * 33}]
        assert invalid("static_map", {"markers": long_label}).startswith("markers.0.label:")
        bad_colour = [{"lat": 0.0, "lon": 0.0, "color": "rouge"}]
        assert invalid("static_map", {"markers": bad_colour}).startswith("markers.0.color:")
        nested_extra = [{"lat": 0.0, "lon": 0.0, "size": 3}]
        assert invalid("static_map", {"markers": nested_extra}).startswith("markers.0.size:")

    def test_colours_are_normalised(self) -> None:
        arguments = validate_arguments(
            "static_map", {"markers": [{"lat": 1.0, "lon": 2.0, "color": "Blue"}]}
        )
        assert arguments["markers"][0]["color"] == "#1b4f9c"

    def test_bbox_order(self) -> None:
        bbox = {"west": 0.0, "south": 10.0, "east": 5.0, "north": 5.0}
        assert "south must be less than north" in invalid("static_map", {"bbox": bbox})


class TestToolReference:
    def test_docs_tools_md_is_written_from_the_catalogue(self, geodata_dir: Path) -> None:
        committed = (Path(__file__).parents[2] / "docs" / "TOOLS.md").read_text(encoding="utf-8")
        assert committed == tools_document(), "run: .venv/bin/geosvc data reference"

    def test_every_tool_and_argument_is_in_it(self) -> None:
        reference = tool_reference()
        for spec in TOOL_SPECS.values():
            assert f"## `{spec.name}`" in reference
            for argument in spec.args_model.model_json_schema()["properties"]:
                assert f"| `{argument}` |" in reference, (spec.name, argument)


@pytest.mark.parametrize("label", ["Office\x00", "\x1b[31mred", "a\u202eb"])
def test_a_marker_label_is_plain_text(label: str) -> None:
    marker = {"lat": 40.7, "lon": -74.0, "label": label}
    with pytest.raises(InvalidArgument, match="label: must not contain"):
        validate_arguments("static_map", {"markers": [marker]})
    marker["label"] = "Office, 5th floor"
    validate_arguments("static_map", {"markers": [marker]})
