"""The `geosvc` command: run the processes and operate the service."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console

cli = typer.Typer(no_args_is_help=True, add_completion=False, help="Geospatial Data Service")
console = Console()


def _reload_settings() -> None:
    from app.config import get_settings
    from app.db import engine_for
    from app.redis_client import reset_clients

    get_settings.cache_clear()
    engine_for.cache_clear()
    reset_clients()


@cli.command()
def migrate() -> None:
    """Bring the database schema up to date."""
    from app.db import migrate as run_migrations

    run_migrations()
    console.print("database is up to date")


@cli.command("create-user")
def create_user(
    email: str,
    password: Annotated[str, typer.Option(prompt=True, hide_input=True)],
    name: str | None = None,
) -> None:
    """Create an account (for operators; users sign up in the dashboard)."""
    from app.accounts.service import create_user as create
    from app.db import migrate as run_migrations
    from app.db import new_session

    run_migrations()
    with new_session() as session:
        user = create(session, email=email, password=password, name=name)
        session.commit()
    console.print(f"created {user.id} <{user.email}>")


@cli.command()
def api(
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes")] = 1,
) -> None:
    """Run the HTTP API (control plane, dashboard, /mcp) against the configured services."""
    import uvicorn

    from app.db import migrate as run_migrations

    run_migrations()
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=True,
        log_level="info",
    )


@cli.command()
def dev(host: str = "127.0.0.1", port: int = 8000) -> None:
    """All in one process on the embedded default: SQLite, local Redis, in-process worker."""
    from app.config import get_settings
    from app.embedded_redis import embedded_redis

    with embedded_redis() as redis_url:
        os.environ.setdefault("GEOSVC_REDIS_URL", redis_url)
        os.environ.setdefault("GEOSVC_BASE_URL", f"http://{host}:{port}")
        _reload_settings()
        from app.devserver import serve

        serve(get_settings(), host=host, port=port, console=console)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
