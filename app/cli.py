"""The `geosvc` command: run the processes and operate the service."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from app.admin.cli import register as register_admin_commands
from app.deployment.cli import register as register_deployment_commands
from app.geodata.cli import data_cli
from app.geodata.cli import register as register_geodata_commands
from app.mcp.cli import register as register_reference_command
from app.worker_start import (
    ALL_QUEUES,
    IDLE_PROC_ALIVE_TIMEOUT_S,
    lower_cpu_priority,
    quiet_root_warning,
    require_tool_data,
    worker_pool,
)

# The Celery edge, named (not imported: `app` never imports `workers`) for the worker and
# beat processes to load: its tasks, worker signals and the beat schedule.
WORKER_TASKS = "workers"

cli = typer.Typer(no_args_is_help=True, add_completion=False, help="Geospatial Data Service")
console = Console()


def _serve_as(process: str) -> None:
    """Production then asks for the secrets this process reads only (app/kit/production.py)."""
    from app.kit.config import get_settings
    from app.kit.production import serve_as

    serve_as(process)
    get_settings.cache_clear()


@cli.command()
def migrate(
    to: Annotated[str, typer.Option("--to", help="upgrade to this revision")] = "head",
    down_to: Annotated[
        str | None,
        typer.Option("--down-to", help="downgrade to this revision (drops what newer ones added)"),
    ] = None,
    show: Annotated[
        bool, typer.Option("--show", help="print the revisions, change nothing")
    ] = False,
) -> None:
    """Bring the database schema up to date: once per release, before its code serves.

    What each downgrade drops: docs/DEPLOYMENT.md, "Upgrades and rollbacks"."""
    _serve_as("migrate")
    from app.kit.db import downgrade, schema_revisions
    from app.kit.db import migrate as run_migrations

    if down_to is not None and not show:
        downgrade(down_to)
    elif not show:
        run_migrations(to)
    current, head, known = schema_revisions()
    newer = "" if known else ", newer than this release knows"
    console.print(f"database at {current or 'no schema'}{newer} (this release's schema: {head})")


@cli.command("create-user")
def create_user(
    email: str,
    password: Annotated[str, typer.Option(prompt=True, hide_input=True)],
    name: str | None = None,
) -> None:
    """Create an account (for operators; users sign up in the dashboard)."""
    from app.kit.db import migrate as run_migrations
    from app.kit.db import new_session
    from app.users.service import create_user as create

    run_migrations()
    with new_session() as session:
        user = create(session, email=email, password=password, name=name)
        session.commit()
    console.print(f"created {user.id} <{user.email}>")


@cli.command("server-json")
def server_json_command(
    out: Annotated[str, typer.Option("--out", help="where to write it")] = "server.json",
) -> None:
    """Write the MCP registry entry (server.json) for GEOSVC_BASE_URL, to publish with
    `mcp-publisher publish`."""
    import json

    from app.kit.config import get_settings
    from app.mcp.cards import server_json

    document = server_json(get_settings())
    Path(out).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    console.print(f"wrote {out}: {document['name']} at {document['remotes'][0]['url']}")


@cli.command()
def api(
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes")] = 1,
    migrate: Annotated[
        bool,
        typer.Option(
            "--migrate/--no-migrate",
            help="migrate first, or (deployments, after `geosvc migrate`) refuse an old schema",
        ),
    ] = True,
) -> None:
    """Run the HTTP API (control plane, dashboard, /mcp) against the configured services."""
    _serve_as("api")
    import uvicorn

    from app.http.server import uvicorn_options
    from app.kit.config import get_settings
    from app.kit.db import migrate as run_migrations
    from app.kit.db import require_current_schema
    from app.kit.redis_client import require_persistent_redis
    from app.observability.setup import metrics_process_group

    with metrics_process_group(get_settings()):
        require_persistent_redis()
        if migrate:
            run_migrations()
        else:
            require_current_schema()
        uvicorn.run(
            "app.main:create_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="info",
            log_config=None,  # ours (JSON lines), set up by metrics_process_group/create_app
            **uvicorn_options(),  # request bounds (app/http/server.py), no server header
        )


@cli.command()
def worker(
    queues: Annotated[str, typer.Option(help="comma-separated queues")] = ALL_QUEUES,
    concurrency: Annotated[
        int | None,
        typer.Option(help="threads or processes (default: see below)"),
    ] = None,
    pool: Annotated[
        str | None,
        typer.Option(help="prefork, threads or solo (default: see below)"),
    ] = None,
    hostname: Annotated[str | None, typer.Option(help="node name, e.g. w1@%h")] = None,
    nice: Annotated[
        int | None,
        typer.Option(help="CPU niceness (default: 10 for tools.free,tools.heavy only, else 0)"),
    ] = None,
    idle: Annotated[
        bool | None,
        typer.Option(
            help="run at SCHED_IDLE: only CPU nothing else wants (default: --queues jobs)"
        ),
    ] = None,
    loglevel: str = "info",
    quiet: Annotated[bool, typer.Option(help="no start-up banner")] = False,
) -> None:
    """Run a Celery worker: tool calls and the billing ledger.

    By default one worker takes every queue. To isolate tenants, run the paying pool
    (`--queues tools`), the bulk pool (`--queues tools.free,tools.heavy,billing`, niced)
    and the jobs pool (`--queues jobs`, SCHED_IDLE) as separate workers
    (docs/OPERATIONS.md, "Tenant isolation").

    The pool of a worker that takes `tools` follows GEOSVC_TOOLS_POOL, by default `auto`:
    one process per CPU while every tool is answered by the embedded datasets (CPU-bound
    lookups), 64 threads (GEOSVC_TOOLS_CONCURRENCY) once some tool goes upstream (calls
    mostly wait on the provider). The embedded indices are memory-mapped, read-only
    arrays loaded before the pool starts: forked processes and threads share one copy.
    Celery enforces no time limits on a threads pool; tool calls are bounded by their
    HTTP timeouts and the api's deadline. Run `--queues billing` as its own prefork
    worker to keep the billing tasks' time limits.
    """
    _serve_as("worker-billing" if "billing" in queues.split(",") else "worker")
    from app.kit.config import get_settings
    from app.kit.redis_client import require_persistent_redis
    from app.observability.setup import metrics_process_group
    from app.queue.celery import MAINTENANCE_TIME_LIMIT_S

    # The api's statement timeout keeps requests inside their deadline; a worker's
    # statements are bounded by its tasks' time limits, and a month's reconciliation over
    # a big ledger may take longer than 5 s. Unless set, the longest task limit.
    os.environ.setdefault("GEOSVC_DB_STATEMENT_TIMEOUT_S", str(MAINTENANCE_TIME_LIMIT_S))
    get_settings.cache_clear()
    settings = get_settings()
    if pool is None:
        pool, default_concurrency = worker_pool(queues, settings)
    else:
        default_concurrency = settings.tools_concurrency if pool == "threads" else None
    if concurrency is None:
        concurrency = default_concurrency
    # No gossip, mingle or worker heartbeat events: nothing here uses them, and their
    # broadcast consumers are where kombu's Redis reconnect race crashed workers.
    argv = ["worker", "--queues", queues, "--pool", pool, "--loglevel", loglevel]
    if quiet:
        argv = ["--quiet", *argv]
    if settings.is_development:
        quiet_root_warning()
    argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    if hostname is not None:
        argv += ["--hostname", hostname]
    priority = lower_cpu_priority(queues, nice, idle)  # before the pool: its processes inherit it
    with metrics_process_group(settings):
        require_persistent_redis()
        announcer = require_tool_data(queues, settings.data_dir)
        # the tasks import the features, which define metrics: after the process group
        from app.observability.celery_hooks import install_worker
        from app.queue import celery_app, liveness

        celery_app.loader.import_module(WORKER_TASKS)
        if priority == "SCHED_IDLE":  # a new pool process may wait long for a core
            celery_app.conf.worker_proc_alive_timeout = IDLE_PROC_ALIVE_TIMEOUT_S
        liveness.install(celery_app, announcer)
        liveness.start_watchdog()
        install_worker(pool)
        celery_app.worker_main(argv)


@cli.command("worker-health")
def worker_health(
    max_age: Annotated[float, typer.Option(help="seconds since the last heartbeat")] = 15.0,
) -> None:
    """Exit 0 while this host's worker consumes (a fresh heartbeat from its loop), else 1."""
    _serve_as("worker")  # the probe runs beside any pool, with its secrets
    from app.kit.config import get_settings
    from app.queue.liveness import heartbeat_age_s

    age = heartbeat_age_s(get_settings().worker_heartbeat_file)
    if age is None or age > max_age:
        console.print(f"worker not consuming (heartbeat age: {age})")
        raise typer.Exit(1)
    console.print(f"worker consuming (heartbeat {age:.1f} s ago)")


@cli.command()
def beat(
    loglevel: str = "info",
    quiet: Annotated[bool, typer.Option(help="no start-up banner")] = False,
) -> None:
    """Run Celery beat: monthly period rollover and ledger reconciliation (one per deployment)."""
    _serve_as("beat")
    from app.kit.config import get_settings
    from app.queue import celery_app

    celery_app.loader.import_module(WORKER_TASKS)

    data_dir = get_settings().data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    schedule = str(data_dir / "celerybeat-schedule")
    argv = ["beat", "--loglevel", loglevel, "--schedule", schedule]
    celery_app.start(["--quiet", *argv] if quiet else argv)


@cli.command()
def flower(
    address: Annotated[
        str, typer.Option(help="listen address (0.0.0.0 only inside a container)")
    ] = "127.0.0.1",
    port: int = 5555,
) -> None:
    """Run Flower, the Celery monitor, behind basic auth from GEOSVC_FLOWER_AUTH.

    Flower shows every task's arguments and results (users' tool calls), so production
    refuses to start it without a password.
    """
    _serve_as("flower")
    from app.kit.config import get_settings
    from app.queue import celery_app

    auth = get_settings().flower_auth
    if auth is None or not auth.get_secret_value():
        if not get_settings().is_development:
            console.print(
                "[red]geosvc: refusing to start:[/] GEOSVC_FLOWER_AUTH (user:password) is "
                "required with GEOSVC_ENV=production: Flower shows users' tool arguments "
                "and results.",
                soft_wrap=True,
            )
            raise SystemExit(2)
        console.print("[yellow]Flower without a password[/] (set GEOSVC_FLOWER_AUTH=user:password)")
    else:
        # Through the environment, not argv: argv is visible to every local user (ps).
        os.environ["FLOWER_BASIC_AUTH"] = auth.get_secret_value()
    celery_app.start(["flower", f"--address={address}", f"--port={port}"])


@cli.command()
def dev(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Everything on the embedded default: SQLite, a local Redis, api + worker + beat."""
    from app.devserver import DevServerRefused, only_copy_on, port_is_free
    from app.kit.config import get_settings
    from app.kit.embedded_redis import embedded_redis

    # Ctrl-C (SIGINT) and SIGTERM stop the start-up wherever it is, the first index build
    # included, even when launched with SIGINT ignored (a background job of a script);
    # uvicorn installs its own handlers once it serves.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # Before any work: a busy port must not cost the running copy its demo key.
    if not port_is_free(host, port):
        console.print(
            f"[red]geosvc dev: {host}:{port} is already in use.[/] Pick another port: "
            f"`geosvc dev --port 8001` (or `make run PORT=8001`).",
            soft_wrap=True,
        )
        raise SystemExit(1)
    try:
        with only_copy_on(get_settings().data_dir), embedded_redis() as redis_url:
            os.environ.setdefault("GEOSVC_REDIS_URL", redis_url)
            os.environ.setdefault("GEOSVC_BASE_URL", f"http://{host}:{port}")
            os.environ.setdefault("GEOSVC_LOG_FORMAT", "text")  # for a person at the terminal
            from app.runtime import reload_settings

            reload_settings()
            from app.devserver import serve

            serve(host=host, port=port, console=console)
    except DevServerRefused as exc:
        console.print(f"[red]geosvc dev:[/] {exc}", soft_wrap=True)
        raise SystemExit(1) from None


register_geodata_commands(cli)
register_reference_command(data_cli)
register_admin_commands(cli)
register_deployment_commands(cli)


def main() -> None:
    from pydantic import ValidationError

    try:
        cli()
    except ValidationError as exc:  # Settings refused (e.g. unsafe in production): say why
        from app.deployment.checks import validation_problems

        problems, _, _ = validation_problems(exc)
        console.print("[red]geosvc: refusing to start:[/]")
        for problem in problems:
            console.print(f"  - {problem}", soft_wrap=True, markup=False, highlight=False)
        console.print("  (`geosvc check-config` lists every problem of a deployment at once)")
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
