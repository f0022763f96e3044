"""docs/TOOLS.md's last part: one answer of each tool as a host's model sees it. Claude
Desktop passes its model only a result's `content`; Claude Code and VS Code only its
`structuredContent`. Both views are written from real answers of the embedded datasets,
rendered by the server's own result code (`app.mcp.tool_results`), so each shows every field.

`geosvc data reference` writes the whole file (`tools_document`); a test checks it is
current. Needs the geodata indices (`geosvc data build`).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types

from app.geodata import service
from app.geodata.catalogue import TOOL_SPECS
from app.geodata.reference import tool_reference
from app.mcp.tool_results import success_result

# The OpenAPI document's example calls, with their arguments as MCP takes them where /v1's
# query form differs (static_map's).
EXAMPLES: dict[str, dict[str, Any]] = {
    name: spec.example.mcp_arguments or spec.example.arguments for name, spec in TOOL_SPECS.items()
}
# Of an inline image, the docs show the start of its base64.
IMAGE_PREFIX = 40


def example_result(tool: str) -> types.CallToolResult:
    """The MCP result of the tool's example call (its `_meta` left out: no account)."""
    result = service.execute(tool, EXAMPLES[tool])
    image = None
    if result.png:
        data = base64.b64encode(result.png).decode("ascii")
        image = types.ImageContent(type="image", data=data, mime_type="image/png")
    return success_result(tool, result.structured, None, image=image)


def _content(result: types.CallToolResult) -> str:
    lines = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            lines.append(block.text)
        elif isinstance(block, types.ImageContent):
            lines.append(f"[image {block.mime_type}: {block.data[:IMAGE_PREFIX]}...]")
    return "\n".join(lines)


def host_views() -> str:
    lines = [
        "## What a host's model sees",
        "",
        "Hosts pass their model different parts of a result: Claude Desktop only `content` "
        "(the summary line, then the result as JSON; an image block), Claude Code and VS Code "
        "only `structuredContent`. Each carries every field. One answer of each tool, from "
        "the embedded datasets:",
        "",
    ]
    for tool, arguments in EXAMPLES.items():
        result = example_result(tool)
        lines += [
            f"### `{tool}` `{json.dumps(arguments, ensure_ascii=False)}`",
            "",
            "Claude Desktop (`content`):",
            "",
            "```text",
            _content(result),
            "```",
            "",
            "Claude Code (`structuredContent`):",
            "",
            "```json",
            json.dumps(result.structured_content, ensure_ascii=False, indent=2),
            "```",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def tools_document() -> str:
    """docs/TOOLS.md: the catalogue's reference, then the host views."""
    return f"{tool_reference()}\n{host_views()}"
