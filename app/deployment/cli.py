"""`geosvc check-config` and `geosvc settings-reference`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()


def check_config(
    production: Annotated[
        bool,
        typer.Option(
            "--production/--as-set",
            help="judge as GEOSVC_ENV=production (default) or as GEOSVC_ENV says",
        ),
    ] = True,
    tls_dir: Annotated[
        Path | None,
        typer.Option("--tls-dir", help="also check the proxy's certificate, e.g. deploy/tls"),
    ] = None,
) -> None:
    """List every reason the deployment would refuse to start (exit 2), or say it is fine.

    Reads the environment and ./.env like every process does."""
    from app.deployment.checks import deployment_problems

    problems = deployment_problems(production=production, tls_dir=tls_dir)
    if not problems:
        console.print("check-config: every process would start with these settings")
        return
    console.print(f"check-config: {len(problems)} problem(s); every process refuses to start:")
    for problem in problems:
        console.print(f"  - {problem}", soft_wrap=True, markup=False, highlight=False)
    raise SystemExit(2)


def settings_reference_command(
    out: Annotated[Path, typer.Option("--out", help="where to write it")] = Path(
        "docs/SETTINGS.md"
    ),
) -> None:
    """Write the settings reference (docs/SETTINGS.md) from app/kit/config.py."""
    from app.deployment.reference import settings_reference

    out.write_text(settings_reference(), encoding="utf-8")
    console.print(f"wrote {out}")


def register(cli: typer.Typer) -> None:
    cli.command("check-config")(check_config)
    cli.command("settings-reference")(settings_reference_command)
