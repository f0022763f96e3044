"""Tool results on the wire: data once, as `structuredContent`, with a short summary as
text (`app.geodata.summaries`); errors as `isError` results carrying the envelope
`{"error": {"code", "message", ...}}` as text and structure."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from app.errors import AppError
from app.geodata.summaries import summarize


def success_result(
    tool: str, structured: dict[str, Any], png_base64: str | None
) -> types.CallToolResult:
    content: list[types.ContentBlock] = [
        types.TextContent(type="text", text=summarize(tool, structured))
    ]
    if png_base64 is not None:
        content.append(types.ImageContent(type="image", data=png_base64, mime_type="image/png"))
    return types.CallToolResult(content=content, structured_content=structured)


def error_result(exc: AppError) -> types.CallToolResult:
    body = exc.to_body()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body))],
        structured_content=body,
        is_error=True,
    )
