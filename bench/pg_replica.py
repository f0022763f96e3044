"""A PostgreSQL primary and a streaming standby on free ports, for failover drills.

The standby is a `pg_basebackup -R` of the primary (so it streams from it); with
`synchronous=True` the primary names it in `synchronous_standby_names`, so a commit returns
only once the standby has flushed its WAL. That setting is given on the primary's command
line, not in its configuration files, so the base backup does not copy it: a promoted
standby with no standby of its own must not wait for one (its commits would hang).

The app reaches the pair through one libpq multi-host URL with
`target_session_attrs=read-write`: whichever host accepts writes is the primary.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import psycopg
from drill_stack import Postgres, wait_for

from app.kit.embedded_redis import free_port
from app.queue.liveness import children_of

STANDBY_NAME = "standby1"


class StreamingPair:
    """Duck-types `drill_stack.Postgres` for `production_shape(database=...)`: `url`,
    `start`, `create_database`, `query` (on the current primary), `stop`."""

    def __init__(self, workdir: Path, *, synchronous: bool) -> None:
        self.synchronous = synchronous
        options = "-c wal_level=replica -c max_wal_senders=5 -c wal_keep_size=256MB"
        if synchronous:
            options += f" -c synchronous_standby_names={STANDBY_NAME}"
        self.primary = Postgres(workdir, "pg-primary", options=options)
        self.standby = Postgres(workdir, "pg-standby", initdb=False, options="-c hot_standby=on")
        self.promoted = False
        hosts = f"127.0.0.1:{self.primary.port},127.0.0.1:{self.standby.port}"
        # what the app is given (fixed: the old primary is later read on another port)
        self.url = f"postgresql://postgres@{hosts}/geosvc?target_session_attrs=read-write"

    @property
    def current(self) -> Postgres:
        return self.standby if self.promoted else self.primary

    @property
    def port(self) -> int:
        return self.current.port

    def start(self) -> None:
        self.primary.start()
        self.primary._run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres",
            "-D", str(self.standby.data), "-R", "-X", "stream", "--no-sync",
        )  # fmt: skip
        # -R wrote standby.signal and primary_conninfo; a later line wins: name the standby
        conninfo = (
            f"host=127.0.0.1 port={self.primary.port} user=postgres application_name={STANDBY_NAME}"
        )
        with (self.standby.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(f"primary_conninfo = '{conninfo}'\n")
        self.standby.start()
        wait_for(lambda: self.replication_state() is not None, "standby streaming", 30)

    def replication_state(self) -> tuple[str, str] | None:
        """(state, sync_state) of the standby as the primary sees it, None when absent."""
        rows = self.primary_query(
            "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = %s",
            STANDBY_NAME,
        )
        if not rows or rows[0][0] != "streaming":
            return None
        return str(rows[0][0]), str(rows[0][1])

    def primary_query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        admin = f"postgresql://postgres@127.0.0.1:{self.primary.port}/postgres"
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]

    def create_database(self) -> None:
        self.primary.create_database()

    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        return self.current.query(sql, *params)

    def kill_primary(self) -> None:
        """SIGKILL the primary's postmaster and every backend at once: the host is gone."""
        postmaster = self.primary.pid
        for pid in [*children_of(postmaster), postmaster]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not Path(f"/proc/{postmaster}").exists(), "primary gone", 10)

    def standby_rows(self, sql: str) -> list[tuple[object, ...]]:
        """What the standby holds once it has replayed all the WAL it received (read on
        the hot standby, before a promotion)."""
        caught_up = "SELECT pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()"
        wait_for(lambda: self.standby.query(caught_up)[0][0] is True, "standby replay", 10)
        return self.standby.query(sql)

    def promote(self) -> None:
        self.standby._run("pg_ctl", "-D", str(self.standby.data), "-w", "promote")
        wait_for(lambda: self.standby.query("SELECT pg_is_in_recovery()")[0][0] is False,
                 "promotion", 30)  # fmt: skip
        self.promoted = True

    def kill_primary_behind(self, lag_s: float) -> None:
        """The primary dies while its standby lags: the primary's WAL sender is stopped
        (SIGSTOP) for `lag_s`, so nothing written meanwhile leaves the primary, then the
        primary is killed. With synchronous replication its commits wait meanwhile (their
        rows are on the primary's disk, never acknowledged); without, they return.
        (Stopping the standby's receiver instead would not do: the kernel still takes the
        WAL into its socket buffer, and the receiver reads it once let go.)"""
        sender = self._child_of(self.primary, "walsender")
        os.kill(sender, signal.SIGSTOP)
        time.sleep(lag_s)
        self.kill_primary()

    def _child_of(self, server: Postgres, kind: str) -> int:
        for pid in children_of(server.pid):
            with contextlib.suppress(OSError):
                if (
                    Path(f"/proc/{pid}/cmdline")
                    .read_bytes()
                    .startswith(f"postgres: {kind}".encode())
                ):
                    return pid
        raise RuntimeError(f"no {kind} process under {server.dir.name}")

    def old_primary_rows(self, sql: str) -> list[tuple[object, ...]]:
        """What the dead primary had committed: its data directory started on a port the
        app does not know (crash recovery replays its WAL), queried, and stopped again.
        Never on its old port: the app would take it for a primary (split brain)."""
        old = self.primary
        old.port = free_port()
        old.options = ""  # alone, it must not wait for a synchronous standby
        old.start()
        try:
            return old.query(sql)
        finally:
            old.stop("fast")

    def stop(self, mode: str = "fast") -> None:
        for server in (self.standby, self.primary):
            with contextlib.suppress(Exception):
                server.stop(mode)
