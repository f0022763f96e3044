"""Each tool's context budget: its definition in tools/list (name, title, description,
input and output schemas, annotations), as compact JSON the way the server sends it, is
at most `TOOL_DEFINITION_MAX_CHARS` characters, on the embedded default and with every
upstream-capable tool upstream. A budget per tool, not one for the whole list: a new tool
brings its own, and a tool that grows past it is named (tests/mcp/test_host_view.py
checks the same over a real server)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.geodata.catalogue import TOOL_SPECS
from app.kit.config import Settings
from app.mcp.server import tool_definition

TOOL_DEFINITION_MAX_CHARS = 3_500


def definition_size(tool: dict[str, Any]) -> int:
    """Characters of a listed tool as compact JSON (what the server writes)."""
    return len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False))


def over_budget(tools: list[dict[str, Any]]) -> dict[str, int]:
    """The tools over their budget, with their sizes."""
    sizes = {tool["name"]: definition_size(tool) for tool in tools}
    return {name: size for name, size in sizes.items() if size > TOOL_DEFINITION_MAX_CHARS}


def budget_message(over: dict[str, int]) -> str:
    return "; ".join(
        f"{name} is {size:,} characters, {size - TOOL_DEFINITION_MAX_CHARS:,} over its "
        f"{TOOL_DEFINITION_MAX_CHARS:,}-character budget"
        for name, size in over.items()
    )


DEPLOYMENTS = {
    "embedded": Settings(),
    "upstream": Settings(
        upstream_tools=[name for name, spec in TOOL_SPECS.items() if spec.upstream_capable],
        upstream_contact="ops@example.com",
    ),
}


@pytest.mark.parametrize("deployment", sorted(DEPLOYMENTS))
def test_each_tool_definition_fits_its_budget(deployment: str) -> None:
    settings = DEPLOYMENTS[deployment]
    tools = [
        tool_definition(spec, settings).model_dump(by_alias=True, exclude_none=True, mode="json")
        for spec in TOOL_SPECS.values()
    ]
    over = over_budget(tools)
    assert over == {}, budget_message(over)


def test_a_tool_over_its_budget_is_named() -> None:
    tools = [{"name": "small", "description": "x"}, {"name": "big", "description": "x" * 3_500}]
    over = over_budget(tools)
    assert list(over) == ["big"]
    assert budget_message(over).startswith("big is 3,531 characters, 31 over")
