"""Characters per answer and of the tool list, this tree against a base commit (issue 37).

Per tool (docs/TOOLS.md's example call, from the embedded datasets), a batch and an error:
  text    the text block, what Claude Desktop's model reads (before: a summary of one to
          three lines; now: a summary line and the result as JSON)
  struct  `structuredContent` as JSON, what Claude Code's model reads (unchanged)
  result  the whole result as sent, `_meta` included (an image's base64 left out)
The base's text block is its own `summarize` (`git show BASE:app/geodata/summaries.py`),
run on the same answer. Then the size of `tools/list` as this tree lists it, and of each
tool's definition (its budget: tests/mcp/test_tool_budget.py).

    GEOSVC_DATA_DIR=.geosvc .venv/bin/python bench/answer_sizes.py [--base main]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import types
from typing import Any

import mcp_types

from app.geodata import service
from app.geodata.catalogue import TOOL_SPECS
from app.kit.config import Settings
from app.kit.errors import NotFound
from app.mcp.host_views import EXAMPLES, example_result
from app.mcp.server import tool_definition
from app.mcp.tool_results import compact_json, error_result, success_result
from app.metering.readings import MeterReading
from app.plans import Plan


def base_summaries(base: str) -> Any:
    source = subprocess.run(
        ["git", "show", f"{base}:app/geodata/summaries.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("base_summaries")
    exec(compile(source, "base_summaries.py", "exec"), module.__dict__)
    return module


def sent(result: mcp_types.CallToolResult) -> int:
    dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    for block in dumped["content"]:
        block.pop("data", None)  # the image: the same bytes before and after
    return len(json.dumps(dumped, ensure_ascii=False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="main")
    base = base_summaries(parser.parse_args().base)
    reading = MeterReading(charged=1, used=42, plan=Plan.FREE, period="2026-11")
    batch_items = [service.execute("geocode", {"query": q}).structured for q in ("Austin", "Lyon")]
    batch = {"results": [{"status": 200, "result": r} for r in batch_items], "credits": 2}
    rows: list[tuple[str, int, int, int, int, int]] = []
    for tool in EXAMPLES:
        now = example_result(tool)
        structured = dict(now.structured_content or {})
        before_text = base.summarize(tool, structured)
        before = mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=before_text), *now.content[1:]],
            structured_content=structured,
        )
        now = success_result(tool, structured, reading, image=None)
        rows.append(
            (
                tool,
                len(before_text),
                len(now.content[0].text),  # type: ignore[union-attr]
                len(compact_json(structured)),
                sent(before),
                sent(now),
            )
        )
    batch_now = success_result("geocode", batch, reading)
    batch_before = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=base.summarize("geocode", batch))],
        structured_content=batch,
    )
    rows.append(
        (
            "geocode batch (2)",
            len(base.summarize("geocode", batch)),
            len(batch_now.content[0].text),  # type: ignore[union-attr]
            len(compact_json(batch)),
            sent(batch_before),
            sent(batch_now),
        )
    )
    error = NotFound("No US ZIP code 00000 with residents")
    error_now = error_result(error)
    error_before = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(error.to_body()))],
        structured_content=error.to_body(),
        is_error=True,
    )
    error_text = len(error_now.content[0].text)  # type: ignore[union-attr]
    rows.append(
        (
            "an error (NOT_FOUND)",
            len(json.dumps(error.to_body())),
            error_text,
            len(compact_json(error.to_body())),
            sent(error_before),
            sent(error_now),
        )
    )
    print(f"{'answer':<22} {'text before':>11} {'text now':>9} {'struct':>7} "
          f"{'result before':>13} {'result now':>10}")  # fmt: skip
    for name, *sizes in rows:
        print(f"{name:<22} {sizes[0]:>11,} {sizes[1]:>9,} {sizes[2]:>7,} "
              f"{sizes[3]:>13,} {sizes[4]:>10,}")  # fmt: skip
    settings = Settings()
    tools = [
        tool_definition(spec, settings).model_dump(by_alias=True, exclude_none=True, mode="json")
        for spec in TOOL_SPECS.values()
    ]
    print(f"tools/list: {len(json.dumps({'tools': tools})):,} characters of JSON")
    for tool in tools:  # each against its budget (tests/mcp/test_tool_budget.py)
        size = len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False))
        print(f"  {tool['name']:<20} {size:>6,} characters of compact JSON")


if __name__ == "__main__":
    main()
