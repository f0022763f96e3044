"""Tool results on the wire, for hosts that pass their model only one part of a result:
Claude Desktop only `content`, Claude Code and VS Code only `structuredContent`. So the
text block carries the data too: one summary line (`app.geodata.catalogue.summarize`), then the
result itself as compact JSON, the same object as `structuredContent` (as the MCP
specification asks of a tool that returns structured content). Errors are `isError`
results whose text is the envelope `{"error": {"code", "message", ...}}` as JSON, also
given as `structuredContent`. Every result's `_meta["geosvc/usage"]` says what the call
cost and where the month's credits stand (`app.metering.readings`).
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from app.geodata.catalogue import summarize
from app.kit.errors import AppError
from app.metering.readings import MeterReading, usage_meta


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text_block(tool: str, structured: dict[str, Any]) -> str:
    """What a model reading only `content` gets: the summary line, then the result."""
    return f"{summarize(tool, structured)}\n{compact_json(structured)}"


def success_result(
    tool: str,
    structured: dict[str, Any],
    reading: MeterReading | None,
    *,
    image: types.ImageContent | types.ResourceLink | None = None,
    meta: dict[str, Any] | None = None,
) -> types.CallToolResult:
    text = text_block(tool, structured)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if image is not None:
        content.append(image)
    return types.CallToolResult(
        content=content, structured_content=structured, meta={**usage_meta(reading), **(meta or {})}
    )


def error_result(exc: AppError) -> types.CallToolResult:
    body = exc.to_body()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=compact_json(body))],
        structured_content=body,
        is_error=True,
        meta=usage_meta(exc.reading),
    )
