"""`geosvc data reference`: the tool reference (docs/TOOLS.md), written from what a host
sees (app.mcp.host_views). It sits with the MCP edge, not with geodata's `data` commands
it joins, so the geodata feature never imports the edge."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console(stderr=True)


def reference_command(
    out: Annotated[Path, typer.Option("--out", help="where to write it")] = Path("docs/TOOLS.md"),
) -> None:
    """Write the tool reference (docs/TOOLS.md) from the tool catalogue, with one answer
    of each tool from the embedded datasets (needs `geosvc data build`)."""
    from app.mcp.host_views import tools_document

    out.write_text(tools_document(), encoding="utf-8")
    console.print(f"wrote {out}")


def register(data_cli: typer.Typer) -> None:
    """Add `reference` to the `geosvc data` group (app.geodata.cli.data_cli)."""
    data_cli.command("reference")(reference_command)
