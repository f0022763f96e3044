"""Issue 57, item 2: the playground's form and snippets, from each tool's input schema as
tools/list publishes it. No server: the form's fields, the arguments read back from it in
their JSON types, and the /v1 URL of a call read back by the HTTP API's own parser."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from starlette.datastructures import QueryParams

from app.dashboard.playground_form import arguments_of, form_fields, form_values
from app.dashboard.playground_page import _fields, _is_image
from app.dashboard.playground_snippets import KEY_ENV_VAR, KEY_PLACEHOLDER, snippets
from app.geodata.catalogue import TOOL_SPECS, validate_arguments
from app.geodata.query import query_arguments
from app.kit.errors import InvalidArgument

TOOLS = list(TOOL_SPECS)


def _example(tool: str) -> dict[str, Any]:
    example = TOOL_SPECS[tool].example
    return dict(example.mcp_arguments or example.arguments)


class TestForm:
    @pytest.mark.parametrize("tool", TOOLS)
    def test_the_example_call_survives_the_form(self, tool: str) -> None:
        """The form prefilled with the tool's example reads back the same call."""
        fields = _fields(TOOL_SPECS[tool])
        example = _example(tool)
        texts = form_values(fields, example)

        assert validate_arguments(tool, arguments_of(fields, texts)) == validate_arguments(
            tool, example
        )

    def test_fields_follow_the_schema_types(self) -> None:
        schema = {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
                "lat": {"type": "number"},
                "kind": {"enum": ["a", "b"]},
                "topics": {"type": "array", "items": {"enum": ["age", "housing"]}},
                "center": {"type": "object", "properties": {"lat": {"type": "number"}}},
                "queries": {"type": "array", "items": {"type": "string"}},
                "maybe": {"type": ["boolean", "null"]},
            },
            "required": ["query"],
        }
        fields = {f.name: f for f in form_fields(schema, leave_out=("queries",))}

        assert {name: f.kind for name, f in fields.items()} == {
            "query": "text",
            "limit": "integer",
            "lat": "number",
            "kind": "choice",
            "topics": "list",
            "center": "json",
            "maybe": "boolean",
        }
        assert fields["query"].required
        assert not fields["limit"].required
        assert fields["kind"].choices == ("a", "b")
        read = arguments_of(
            list(fields.values()),
            {
                "query": " Austin ",
                "limit": "3",
                "lat": "-40.5",
                "kind": "",
                "topics": "age, housing",
                "center": '{"lat": 1}',
                "maybe": "true",
            },
        )
        assert read == {
            "query": "Austin",
            "limit": 3,
            "lat": -40.5,
            "topics": ["age", "housing"],
            "center": {"lat": 1},
            "maybe": True,
        }

    def test_text_that_is_not_its_type_is_left_for_the_model_to_refuse(self) -> None:
        schema = {"properties": {"limit": {"type": "integer"}, "lat": {"type": "number"}}}
        fields = form_fields(schema)

        read = arguments_of(fields, {"limit": "2.5", "lat": "nan"})

        assert read == {"limit": 2.5, "lat": "nan"}
        with pytest.raises(InvalidArgument, match="limit"):
            validate_arguments("geocode", {"query": "Austin", "limit": read["limit"]})

    def test_bad_json_and_overlong_text_are_named(self) -> None:
        fields = form_fields({"properties": {"center": {"type": "object"}}})

        with pytest.raises(InvalidArgument, match="center: must be JSON"):
            arguments_of(fields, {"center": "{lat: 1"})
        with pytest.raises(InvalidArgument, match="center: at most"):
            arguments_of(fields, {"center": "[" + "1," * 20_000 + "1]"})


class TestSnippets:
    @pytest.mark.parametrize("tool", TOOLS)
    def test_the_v1_url_reads_back_as_the_same_call(self, tool: str) -> None:
        spec = TOOL_SPECS[tool]
        example = _example(tool)

        url = snippets(spec, example, image=_is_image(spec)).url
        parts = urlsplit(url)
        query = QueryParams(parse_qsl(parts.query, keep_blank_values=True))

        assert parts.path == spec.http_path
        read = query_arguments(tool, query)
        assert validate_arguments(tool, read) == validate_arguments(tool, example)

    def test_markers_and_a_path_take_the_compact_forms(self) -> None:
        spec = TOOL_SPECS["static_map"]
        arguments = {
            "markers": [{"lat": 40.71, "lon": -74.0, "color": "red", "label": "A, B"}],
            "path": [{"lat": 40.71, "lon": -74.0}, {"lat": 40.75, "lon": -73.99}],
            "zoom": 10,
        }

        url = snippets(spec, arguments, image=True).url
        query = QueryParams(parse_qsl(urlsplit(url).query))

        assert query.getlist("markers") == ["40.71,-74,red,A, B"]
        assert query["path"] == "40.71,-74|40.75,-73.99"
        assert query_arguments("static_map", query)["markers"][0]["label"] == "A, B"

    def test_every_snippet_names_the_key_by_a_placeholder(self) -> None:
        spec = TOOL_SPECS["geocode"]
        shown = snippets(spec, {"query": "Austin, TX", "limit": 1}, image=False)

        assert f"${KEY_ENV_VAR}" in shown.curl
        assert f"os.environ['{KEY_ENV_VAR}']" in shown.python
        assert f"Bearer {KEY_PLACEHOLDER}" in shown.mcp_config
        for text in (shown.url, shown.curl, shown.python, shown.mcp_config, shown.mcp_call):
            assert "svc_live_ak_" not in text
            assert "svc_test_ak_" not in text
        compiled = compile(shown.python, "snippet", "exec")  # valid Python
        assert "httpx" in compiled.co_names
