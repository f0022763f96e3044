"""Backup and restore of the PostgreSQL database (`geosvc admin backup|restore`).

The database holds everything that cannot be rebuilt: accounts, sessions, API-key hashes,
subscriptions and Stripe customers, the usage ledger, finalised periods, the meter
batches sent to Stripe, the audit trail. A backup is `pg_dump --format=custom` of it.
Redis holds nothing that is not rebuilt from the ledger (credit counters) or that
expires by itself (rate buckets, reservations, key caches); Celery's queues are not
backed up.

A restore goes into an empty database (no tables; `--force` drops and recreates the
objects of a database that has them), then rebuilds the current period's Redis counters
with reconciliation. Reconciliation only ever raises a counter to the ledger total
(never adds to it) and creates a missing one, so a call that commits while the rebuild
runs is neither counted twice nor lost for good: at worst it waits for the next
reconciliation once its event reaches the ledger.

The restored `stripe_meter_reports` rows keep their identifiers: a batch that was
recorded but not marked sent is sent again with the same identifier (Stripe answers
"already exists"), and overage already reported is not reported again.

Credentials never reach the command line or the logs: the password goes to pg_dump and
pg_restore in their environment (`PGPASSWORD`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from app.kit.db import engine_for, libpq_url, normalise_url
from app.kit.errors import Conflict, InvalidArgument
from app.observability.exposition import BACKUP_STATUS_KEY

TOOL_TIMEOUT_S = 3600
# The names scheduled backups get in their directory (sorted by name = by time), the only
# files retention ever deletes.
SCHEDULED_NAME = "geosvc-{:%Y%m%dT%H%M%SZ}.dump"
SCHEDULED_GLOB = "geosvc-*.dump"


class BackupFailed(RuntimeError):
    """pg_dump or pg_restore exited non-zero (its stderr is the message)."""


def libpq_target(database_url: str) -> tuple[str, dict[str, str]]:
    """(URL for libpq without the password, environment with PGPASSWORD)."""
    url = make_url(normalise_url(database_url))
    if url.get_backend_name() != "postgresql":
        raise InvalidArgument(
            "backup and restore need PostgreSQL (GEOSVC_DATABASE_URL=postgresql://…); "
            "the embedded SQLite database is one file: copy it with `sqlite3 FILE .backup`"
        )
    env = dict(os.environ)
    if url.password is not None:
        env["PGPASSWORD"] = str(url.password)
    # `set(password=None)` keeps the password: it would be in pg_dump's argv, seen by `ps`
    plain = url._replace(password=None).render_as_string(hide_password=False)
    return libpq_url(plain), env  # a primary and its standbys: libpq's host list


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise InvalidArgument(f"{name} is not on PATH (install the PostgreSQL client tools)")
    return path


def _run(argv: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise BackupFailed(f"{Path(argv[0]).name} failed: {done.stderr.strip()[-2000:]}")


def backup(database_url: str, output: Path) -> None:
    """Dump the whole database (custom format: compressed, restorable table by table)."""
    target, env = libpq_target(database_url)
    partial = output.with_name(output.name + ".partial")
    # key hashes and e-mails: readable by the operator only, from the first byte
    os.close(os.open(partial, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600))
    partial.chmod(0o600)
    try:
        _run(
            [_tool("pg_dump"), "--format=custom", "--no-owner", "--file", str(partial), target],
            env,
        )
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    # a dump that died half-way never looks like a backup
    partial.replace(output)


def scheduled_backup(database_url: str, directory: Path, keep_days: int) -> Path:
    """A backup named by its time in `directory`; then the scheduled backups older than
    `keep_days` are deleted (never the newest: a clock jump cannot empty the directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    output = directory / SCHEDULED_NAME.format(datetime.now(UTC))
    backup(database_url, output)
    cutoff = time.time() - timedelta(days=keep_days).total_seconds()
    for old in sorted(directory.glob(SCHEDULED_GLOB))[:-1]:
        if old.stat().st_mtime < cutoff:
            old.unlink()
    return output


def record_success(redis: Any, key_prefix: str, finished: float) -> None:
    """What `geosvc_backup_last_success_timestamp_seconds` reads (the api's /metrics), so
    an alert fires when the newest backup is older than its schedule."""
    redis.set(f"{key_prefix}{BACKUP_STATUS_KEY}", f"{finished:.0f}")


def table_count(database_url: str) -> int:
    return len(inspect(engine_for(database_url)).get_table_names())


def restore(database_url: str, dump: Path, *, force: bool = False) -> None:
    """pg_restore `dump` in one transaction: all of it or nothing."""
    target, env = libpq_target(database_url)
    if not dump.is_file():
        raise InvalidArgument(f"no backup file at {dump}")
    tables = table_count(database_url)
    if tables and not force:
        raise Conflict(
            f"the database already has {tables} tables: restore into a new empty database, "
            "or pass --force to drop and replace what it holds"
        )
    argv = [_tool("pg_restore"), "--no-owner", "--single-transaction", "--exit-on-error"]
    if tables:
        argv += ["--clean", "--if-exists"]
    _run([*argv, "--dbname", target, str(dump)], env)
