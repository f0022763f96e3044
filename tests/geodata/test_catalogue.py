"""Every catalogue entry is complete: a tool is its folder in `app.geodata.tools` (its
spec, summary, /v1 path and example, its argument and result models, its embedded and
upstream answers); nothing else names it (tests/geodata/test_tool_units.py). Needs no
index and no server (the fast tier)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from typing import get_args, get_type_hints

import pytest

from app.geodata import tools
from app.geodata.catalogue import TOOL_SPECS, ToolSpec, summarize, validate_arguments
from app.geodata.providers.embedded import EmbeddedProvider
from app.geodata.providers.upstream import UpstreamProvider
from app.kit.config import UpstreamTool
from app.v1.routes import ROUTES

SPECS = list(TOOL_SPECS.values())


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_the_example_is_a_valid_call_and_a_valid_answer(spec: ToolSpec) -> None:
    # /v1 query parameters: compact forms ("40.71,-74.0") where the tool has them
    assert set(spec.example.arguments) <= set(spec.args_model.model_fields)
    if spec.name != "static_map":
        validate_arguments(spec.name, spec.example.arguments)
    answer = spec.result_model.model_validate(spec.example.result)
    dumped = answer.model_dump(mode="json", by_alias=True)
    assert set(dumped) >= set(spec.example.result) - {"pngBase64"}


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_the_summary_of_the_example_is_one_line(spec: ToolSpec) -> None:
    text = summarize(spec.name, spec.example.result)
    assert text, spec.name
    assert "\n" not in text, text
    assert len(text) < 800, text


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_its_folder_answers_it_with_its_models(spec: ToolSpec) -> None:
    sources = {"embedded": EmbeddedProvider}
    if spec.upstream_capable:
        sources["upstream"] = UpstreamProvider
    for source, provider in sources.items():
        answer = importlib.import_module(f"{spec.package}.{source}").answer
        hints = get_type_hints(answer)
        (first, argument) = inspect.signature(answer).parameters
        assert hints[first] is provider, (source, spec.name)
        assert hints[argument] is spec.args_model, (source, spec.name)
        assert hints["return"] is spec.result_model, (source, spec.name)


def test_each_tool_has_its_own_v1_path_and_its_route() -> None:
    paths = [spec.http_path for spec in SPECS]
    assert len(set(paths)) == len(paths)
    assert all(path.startswith("/v1/") for path in paths)
    assert {r.tool for r in ROUTES if r.kind != "batch"} == set(TOOL_SPECS)


def test_settings_name_exactly_the_upstream_capable_tools() -> None:
    capable = {s.name for s in SPECS if s.upstream_capable}
    assert capable == set(get_args(UpstreamTool))


# The modules of app.geodata.tools that are not a tool.
SHARED_MODULES = {"spec", "common"}


def test_every_tool_module_is_in_the_catalogue() -> None:
    # a module written but left out of the catalogue's list fails here, not silently
    listed = []
    for module in pkgutil.iter_modules(tools.__path__):
        if module.name in SHARED_MODULES:
            continue
        spec = importlib.import_module(f"{tools.__name__}.{module.name}").SPEC
        assert TOOL_SPECS.get(spec.name) is spec, f"{module.name}: not in TOOL_SPECS"
        listed.append(spec.name)
    assert sorted(listed) == sorted(TOOL_SPECS)


def test_a_misspelt_hook_fails_when_its_module_is_imported() -> None:
    # hooks are ToolSpec fields: a name it does not know is refused by its constructor
    with pytest.raises(TypeError, match="describe_call"):
        dataclasses.replace(SPECS[0], describe_call=lambda spec, settings: "")  # type: ignore[call-arg]
