"""`geosvc data build` and `geosvc tool NAME ARGS_JSON`: operating and debugging the data.

`register(cli)` adds them to the main `geosvc` command (`data reference` joins the group
from app.mcp.cli). `tool` runs a tool on the embedded provider directly, with no account
and no metering.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from app.kit.errors import AppError

data_cli = typer.Typer(no_args_is_help=True, help="Embedded datasets and their indices.")
console = Console(stderr=True)

DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="Parent of the index cache (default: settings)")
]


def _data_dir(data_dir: Path | None) -> Path:
    from app.kit.config import get_settings

    return data_dir or get_settings().data_dir


@data_cli.command("build")
def build_command(
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if up to date")] = False,
    data_dir: DataDirOption = None,
) -> None:
    """Build the geodata indices from the installed dataset packages."""
    from app.kit.config import get_settings
    from app.kit.production import serving_as

    # production asks it for no secret (it reads none): Kubernetes gives it none
    with serving_as("data"):
        get_settings.cache_clear()
        try:
            _build(force, data_dir)
        finally:
            get_settings.cache_clear()


def _build(force: bool, data_dir: Path | None) -> None:
    from app.geodata.indices import store
    from app.geodata.indices.build import STEPS, build

    directory = _data_dir(data_dir)
    columns = (TextColumn("{task.description:<12}"), BarColumn(), TimeElapsedColumn())
    with store.build_lock(directory):
        # checked under the lock: a build another process has just finished is not redone
        if not force and store.is_current(store.index_dir(directory)):
            console.print(f"indices are up to date in {store.index_dir(directory)}")
            return
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("starting", total=len(STEPS))
            seen: list[str] = []

            def report(step: str) -> None:
                if seen:
                    progress.advance(task)
                seen.append(step)
                progress.update(task, description=step)

            target = build(directory, report)
            progress.update(task, completed=len(STEPS), description="done")
    meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    counts = ", ".join(f"{v:,} {k}" for k, v in meta["counts"].items())
    console.print(f"built {target} in {meta['buildSeconds']} s: {counts}")


def tool_command(
    name: Annotated[str, typer.Argument(help="Tool name, e.g. geocode")],
    arguments: Annotated[str, typer.Argument(help="JSON object of arguments")] = "{}",
    out: Annotated[Path | None, typer.Option("--out", help="static_map: write PNG here")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Run a tool on the embedded provider and print its JSON result (no metering)."""
    from app.geodata import service

    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        _fail({"error": {"code": "INVALID_ARGUMENT", "message": f"arguments: bad JSON ({exc})"}})
    if data_dir is not None:
        service.configure(data_dir)
    try:
        result = service.execute(name, parsed)
    except AppError as exc:
        _fail(exc.to_body())
    if result.png is not None and out is not None:
        out.write_bytes(result.png)
        console.print(f"wrote {len(result.png):,} bytes to {out}")
    typer.echo(json.dumps(result.structured, ensure_ascii=False, indent=2))


def _fail(body: dict[str, object]) -> None:
    typer.echo(json.dumps(body, ensure_ascii=False), err=False)
    sys.exit(1)


def register(cli: typer.Typer) -> None:
    cli.add_typer(data_cli, name="data")
    cli.command("tool")(tool_command)
