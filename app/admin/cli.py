"""`geosvc admin …`: find an account, show its usage and keys, change its plan, grant
credits, revoke all its keys. Reads print JSON (pipe into jq); changes need `--reason`
and are audited with `--actor` (default: the OS user at this host). `backup` and
`restore` dump and reload the whole database (app.admin.backup)."""

from __future__ import annotations

import getpass
import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from sqlmodel import Session

from app.kit.clock import iso_ms
from app.kit.errors import AppError
from app.plans import Plan

admin_cli = typer.Typer(no_args_is_help=True, help="Operator commands on accounts (audited).")

T = TypeVar("T")

UserArgument = Annotated[str, typer.Argument(help="account id (usr_…) or e-mail")]
ReasonOption = Annotated[str, typer.Option("--reason", help="why (kept in the audit trail)")]


def default_actor() -> str:
    try:
        user = getpass.getuser()
    except OSError:
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


ActorOption = Annotated[
    str | None, typer.Option("--actor", help="who is acting (default: OS user@host)")
]


@contextmanager
def _session() -> Iterator[Session]:
    from app.kit.db import new_session

    try:
        with new_session() as session:
            yield session
    except AppError as exc:
        typer.echo(f"error: {exc.code}: {exc.message}", err=True)
        raise typer.Exit(1) from None


def _echo(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2))


def _with_user(query: str, act: Callable[[Session, str], T]) -> T:
    from app.admin.service import find_user

    with _session() as session:
        user_id = find_user(session, query).id
        result = act(session, user_id)
        session.commit()
        return result


@admin_cli.command("find")
def find_command(user: UserArgument) -> None:
    """The account with this id or e-mail."""
    from app.admin.service import find_user
    from app.plans import plan_of

    with _session() as session:
        found = find_user(session, user)
        _echo(
            {
                "userId": found.id,
                "email": found.email,
                "name": found.name,
                "createdAt": iso_ms(found.created_at),
                "plan": plan_of(session, found.id).value,
            }
        )


@admin_cli.command("show")
def show_command(user: UserArgument) -> None:
    """Usage this month, plan, API keys and the latest audited actions."""
    from app.admin.service import account_report, audit_trail, find_user

    with _session() as session:
        report = account_report(session, find_user(session, user).id)
        trail = audit_trail(session, report.user.id)
        _echo(
            {
                "userId": report.user.id,
                "email": report.user.email,
                "plan": report.plan.value,
                "subscriptionStatus": report.subscription_status,
                "usage": report.usage.model_dump(),
                "grantedThisPeriod": report.granted_this_period,
                "keys": [
                    {"keyId": key.key_id, "name": key.name, "createdAt": iso_ms(key.created_at)}
                    for key in report.active_keys
                ],
                "revokedKeys": report.revoked_keys,
                "audit": [
                    {
                        "at": iso_ms(action.at),
                        "actor": action.actor,
                        "action": action.action,
                        "reason": action.reason,
                        "details": json.loads(action.details),
                    }
                    for action in trail
                ],
            }
        )


@admin_cli.command("set-plan")
def set_plan_command(
    user: UserArgument, plan: Plan, reason: ReasonOption, actor: ActorOption = None
) -> None:
    """Put the account on a plan now (standard: active this month; free: ends it)."""
    from app.admin.service import change_plan

    subscription = _with_user(
        user,
        lambda session, user_id: change_plan(
            session, user_id, plan, actor=actor or default_actor(), reason=reason
        ),
    )
    typer.echo(f"{subscription.user_id} is on the {plan.value} plan")


@admin_cli.command("grant")
def grant_command(
    user: UserArgument,
    credits: Annotated[int, typer.Argument(help="credits to give back this month")],
    reason: ReasonOption,
    actor: ActorOption = None,
) -> None:
    """Grant credits: a ledger adjustment of this month, audited."""
    from app.admin.service import grant_credits
    from app.kit.redis_client import sync_redis

    adjustment = _with_user(
        user,
        lambda session, user_id: grant_credits(
            session, sync_redis(), user_id, credits, actor=actor or default_actor(), reason=reason
        ),
    )
    typer.echo(
        f"granted {credits} credits to {adjustment.user_id} for {adjustment.period} "
        f"({adjustment.call_id})"
    )


@admin_cli.command("revoke-keys")
def revoke_keys_command(
    user: UserArgument, reason: ReasonOption, actor: ActorOption = None
) -> None:
    """Revoke every active API key of the account (honoured everywhere within a second)."""
    from app.admin.service import revoke_all_keys

    revoked = _with_user(
        user,
        lambda session, user_id: revoke_all_keys(
            session, user_id, actor=actor or default_actor(), reason=reason
        ),
    )
    typer.echo(f"revoked {len(revoked)} keys: {' '.join(revoked)}".rstrip(": "))


@admin_cli.command("backup")
def backup_command(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="file to write (pg_dump custom)")
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option("--dir", help="write geosvc-<UTC time>.dump here (scheduled backups)"),
    ] = None,
    keep_days: Annotated[
        int,
        typer.Option("--keep-days", min=1, help="with --dir: delete backups older than this"),
    ] = 30,
) -> None:
    """Dump the PostgreSQL database (accounts, key hashes, subscriptions, ledger) to a file,
    and record the time in Redis (the backup-age alert reads it)."""
    import time

    from app.admin.backup import backup as dump_to
    from app.admin.backup import record_success, scheduled_backup
    from app.kit.config import get_settings
    from app.kit.redis_client import sync_redis

    if (output is None) == (directory is None):
        typer.echo("error: give exactly one of --output FILE and --dir DIRECTORY", err=True)
        raise typer.Exit(2)
    settings = get_settings()
    written: list[Path] = []
    if directory is not None:
        into = directory
        _guarded(lambda: written.append(scheduled_backup(settings.sqlalchemy_url, into, keep_days)))
    else:
        assert output is not None
        _guarded(lambda: dump_to(settings.sqlalchemy_url, output))
        written.append(output)
    typer.echo(f"backup written to {written[0]} ({written[0].stat().st_size} bytes)")
    try:
        record_success(sync_redis(), settings.redis_key_prefix, time.time())
    except Exception as exc:  # the backup is good; only its age metric is not updated
        typer.echo(f"warning: backup time not recorded in Redis: {exc}", err=True)


@admin_cli.command("restore")
def restore_command(
    dump: Annotated[Path, typer.Argument(help="a file written by `geosvc admin backup`")],
    force: Annotated[
        bool, typer.Option("--force", help="replace what a non-empty database holds")
    ] = False,
) -> None:
    """Restore a backup into the (empty) database, then rebuild this month's Redis counters
    from the restored ledger."""
    from app.admin.backup import restore
    from app.kit.config import get_settings

    _guarded(lambda: restore(get_settings().sqlalchemy_url, dump, force=force))
    typer.echo(f"restored {dump}")
    rebuild_counters_command()


@admin_cli.command("rebuild-counters")
def rebuild_counters_command() -> None:
    """Bring this month's Redis counters up to the ledger now (what beat does every 5 min)."""
    from app.kit.clock import utcnow
    from app.kit.redis_client import sync_redis
    from app.metering.reconcile import reconcile

    with _session() as session:
        result = reconcile(session, sync_redis(), now=utcnow())
    typer.echo(
        f"rebuilt Redis counters of {result.period}: {result.checked} accounts, "
        f"{len(result.repairs)} repaired"
    )


def _guarded(act: Callable[[], None]) -> None:
    from app.admin.backup import BackupFailed

    try:
        act()
    except AppError as exc:
        typer.echo(f"error: {exc.code}: {exc.message}", err=True)
        raise typer.Exit(1) from None
    except BackupFailed as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


@admin_cli.callback()
def _logging(context: typer.Context) -> None:
    """Operator commands on accounts (audited)."""
    from app.kit.config import get_settings
    from app.kit.production import serving_as
    from app.observability.logs import configure_logging

    # Run where the api runs (`kubectl exec deploy/geosvc-api`): with the api's secrets;
    # `backup` also runs on its own (the CronJob geosvc-backup) with the two it reads.
    process = "backup" if context.invoked_subcommand == "backup" else "api"
    context.with_resource(serving_as(process))
    context.call_on_close(get_settings.cache_clear)
    get_settings.cache_clear()
    settings = get_settings()
    configure_logging(settings.log_format, settings.log_level)


def register(cli: typer.Typer) -> None:
    cli.add_typer(admin_cli, name="admin")
