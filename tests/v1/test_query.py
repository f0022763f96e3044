"""Query strings read as a tool's arguments (app/geodata/query.py): what a number is, and
lists repeated or comma-separated."""

from __future__ import annotations

import base64

import pytest
from starlette.datastructures import QueryParams

from app.geodata.catalogue import parse
from app.geodata.paging import cursor_at, offset_of
from app.geodata.query import query_arguments
from app.kit.errors import InvalidArgument


@pytest.mark.parametrize("text", ["48.8", "-48", "+1.5e1", ".5", " 48.8 "])
def test_a_decimal_number_is_a_number(text: str) -> None:
    arguments = query_arguments("reverse_geocode", QueryParams({"lat": text, "lon": "2.3"}))
    assert arguments["lat"] == float(text)


@pytest.mark.parametrize("text", ["4_8.8", "\u0664\u0668", "nan", "inf", "0x10", "1e"])
def test_what_only_python_reads_as_a_number_is_refused(text: str) -> None:
    arguments = query_arguments("reverse_geocode", QueryParams({"lat": text, "lon": "2.3"}))
    assert arguments["lat"] == text  # left as text: the model refuses it by name
    with pytest.raises(InvalidArgument, match="lat: must be a number"):
        parse("reverse_geocode", arguments)


def test_a_list_repeated_or_comma_separated() -> None:
    repeated = QueryParams([("postal_code", "94103"), ("topics", "age"), ("topics", "race")])
    commas = QueryParams({"postal_code": "94103", "topics": "age,race"})
    assert query_arguments("get_demographics", repeated)["topics"] == ["age", "race"]
    assert parse("get_demographics", query_arguments("get_demographics", commas)) == parse(
        "get_demographics", query_arguments("get_demographics", repeated)
    )


def test_a_scalar_or_a_path_given_twice_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="lat: give it once"):
        query_arguments("reverse_geocode", QueryParams([("lat", "1"), ("lat", "2"), ("lon", "2")]))
    twice = QueryParams([("path", "40.7,-74|40.8,-74"), ("path", "40.7,-74|40.8,-74")])
    with pytest.raises(InvalidArgument, match="path: give it once"):
        query_arguments("static_map", twice)


@pytest.mark.parametrize("forged", ["offset:+2", "offset:2_0", "offset: 2", "offset:\u0662"])
def test_a_cursor_holds_digits_only(forged: str) -> None:
    cursor = base64.urlsafe_b64encode(forged.encode()).decode().rstrip("=")
    with pytest.raises(InvalidArgument, match="cursor"):
        offset_of(cursor)
    assert offset_of(cursor_at(20)) == 20
