"""The tools' schemas as listed: `T | None` written as a type list, which admits the same
instances as pydantic's anyOf and costs clients less to validate; nothing said twice."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from app.geodata.catalogue import TOOL_SPECS
from app.kit.config import Settings
from app.mcp.server import tool_definition
from app.mcp.tool_schemas import (
    SAID_BY_THE_NAME,
    compact,
    nullable_as_type_list,
    single_use_defs_inlined,
    subsumed_defs_merged,
)


def null_branches(schema: Any) -> list[Any]:
    """Every anyOf that still pairs a branch with {"type": "null"}."""
    found = []
    if isinstance(schema, dict):
        if {"type": "null"} in schema.get("anyOf", []):
            found.append(schema["anyOf"])
        for value in schema.values():
            found += null_branches(value)
    elif isinstance(schema, list):
        for item in schema:
            found += null_branches(item)
    return found


def test_an_optional_plain_value_is_a_type_list() -> None:
    optional = {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "title": "T"}

    assert nullable_as_type_list(optional) == {
        "type": ["string", "null"],
        "maxLength": 3,
        "title": "T",
    }


@pytest.mark.parametrize(
    "optional",
    [
        # null is not among an enum's values, nor is a $ref's target known here
        {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        {"anyOf": [{"$ref": "#/$defs/Match"}, {"type": "null"}]},
        # a keyword beside the anyOf that the branch would overwrite
        {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "minimum": 5},
    ],
)
def test_what_a_type_list_cannot_say_stays_an_anyof(optional: dict[str, Any]) -> None:
    assert nullable_as_type_list(optional) == optional


@pytest.mark.parametrize(
    "instance", [None, "ab", "abcd", 3, 2.5, [], {}, True, "", 0, -1, 10, 10.5]
)
def test_a_type_list_admits_what_the_anyof_admitted(instance: Any) -> None:
    for optional in (
        {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
        {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 10}, {"type": "null"}]},
        {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}]},
    ):
        before = jsonschema.Draft202012Validator(optional).is_valid(instance)
        after = jsonschema.Draft202012Validator(nullable_as_type_list(optional))
        assert after.is_valid(instance) == before, (optional, instance)


def test_no_listed_output_schema_keeps_a_plain_nullable_anyof() -> None:
    settings = Settings()
    for spec in TOOL_SPECS.values():
        schema = tool_definition(spec, settings).output_schema
        assert schema is not None
        jsonschema.Draft202012Validator.check_schema(schema)
        for branches in null_branches(schema):
            (other,) = [branch for branch in branches if branch != {"type": "null"}]
            assert "$ref" in other or "enum" in other, (spec.name, branches)


def test_a_def_with_fewer_fields_of_the_same_types_is_written_once() -> None:
    match = {
        "properties": {"name": {"type": "string"}, "postalCode": {"type": ["string", "null"]}},
        "required": ["name"],
    }
    candidate = {"properties": {"name": {"type": "string", "description": "As above"}}}
    other = {"properties": {"name": {"type": "integer"}}}
    schema = {
        "anyOf": [{"$ref": "#/$defs/Candidate"}, {"$ref": "#/$defs/Other"}],
        "$defs": {"Candidate": candidate, "Match": match, "Other": other},
    }

    # Candidate requires no name, so Match (which does) does not subsume it
    assert subsumed_defs_merged(schema) == schema

    candidate["required"] = ["name"]
    merged = subsumed_defs_merged(schema)

    assert merged["anyOf"] == [{"$ref": "#/$defs/Match"}, {"$ref": "#/$defs/Other"}]
    assert set(merged["$defs"]) == {"Match", "Other"}  # Other's name is an integer


def test_a_def_used_once_is_written_where_it_is_used() -> None:
    schema = {
        "anyOf": [{"$ref": "#/$defs/Once"}, {"$ref": "#/$defs/Twice"}],
        "$defs": {
            "Once": {"properties": {"a": {"$ref": "#/$defs/Twice"}}},
            "Twice": {"properties": {"b": {"type": "string"}}},
        },
    }

    assert single_use_defs_inlined(schema) == {
        "anyOf": [
            {"properties": {"a": {"$ref": "#/$defs/Twice"}}},
            {"$ref": "#/$defs/Twice"},
        ],
        "$defs": {"Twice": {"properties": {"b": {"type": "string"}}}},
    }


def test_every_def_a_listed_schema_refers_to_is_there() -> None:
    settings = Settings()
    for spec in TOOL_SPECS.values():
        schema = tool_definition(spec, settings).output_schema
        assert schema is not None
        text = json.dumps(schema)
        for name in re.findall(r'"#/\$defs/([^"]+)"', text):
            assert name in schema.get("$defs", {}), (spec.name, name)
        for name in schema.get("$defs", {}):
            assert text.count(f'"#/$defs/{name}"') >= 2, (spec.name, name)  # else inlined


def test_a_description_the_name_says_is_left_out_and_one_that_says_more_is_kept() -> None:
    arguments = {
        "properties": {
            "lat": {"type": "number", "description": "Latitude"},
            "lon": {"type": "number", "description": "Longitude of the centre"},
            "west": {"type": "number", "description": "Degrees"},
            "label": {"type": "string", "description": "Latitude"},
        }
    }

    assert compact(arguments)["properties"] == {
        "lat": {"type": "number"},
        "lon": {"type": "number", "description": "Longitude of the centre"},
        "west": {"type": "number"},
        "label": {"type": "string", "description": "Latitude"},  # not what `label` says
    }


def test_a_const_says_its_type_and_meaning_by_its_value() -> None:
    png = {"const": "image/png", "type": "string", "description": "x"}
    result = {"properties": {"format": png}}

    assert compact(result, output=True)["properties"] == {"format": {"const": "image/png"}}


def test_no_listed_tool_describes_a_property_by_its_name_alone() -> None:
    settings = Settings()
    for spec in TOOL_SPECS.values():
        tool = tool_definition(spec, settings)
        text = json.dumps([tool.input_schema, tool.output_schema])
        for name, said in SAID_BY_THE_NAME.items():
            assert f'"{name}": {{"description": "{said}"' not in text, (spec.name, name)
            assert not re.search(rf'"{name}": {{[^{{}}]*"description": "{said}"', text), spec.name
