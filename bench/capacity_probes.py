"""What bench/capacity.py and its cluster mode (capacity_cluster.py) measure with: the CPU
of a process, of a process tree and of a PostgreSQL server; the settings of a stack; a
PostgreSQL as production runs it."""

from __future__ import annotations

import os
from pathlib import Path

from drill_stack import UNLIMITED_TENANTS, Postgres

from app.queue.liveness import children_of

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def postgres_cpu_s(data_dir: Path) -> float:
    """The postmaster and every server process it started (backends, WAL writer...)."""
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == postmaster:
                pids.append(int(entry.name))
    total = 0.0
    for pid in pids:
        try:
            total += cpu_s(pid)
        except OSError:
            pass  # a backend that ended in between
    return total


def tree_cpu_s(pid: int) -> float:
    """A process and all its descendants (a prefork pool, uvicorn's workers)."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            total += cpu_s(current)
        except OSError:
            continue
        pending += children_of(current)
    return total


def settings_env(redis_url: str, database_url: str, prefix: str) -> dict[str, str]:
    return {
        **os.environ,
        **UNLIMITED_TENANTS,
        "GEOSVC_REDIS_URL": redis_url,
        "GEOSVC_DATABASE_URL": database_url,
        "GEOSVC_REDIS_KEY_PREFIX": prefix,
        "GEOSVC_STANDARD_QUOTA": str(10**9),  # no usage alert on the way
        "GEOSVC_LOG_LEVEL": "WARNING",
    }


class DurablePostgres(Postgres):
    """As production runs it: fsync and synchronous commit on."""

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "start")  # fmt: skip


class CpuTable:
    """CPU per unit of work by component, gathered across the bench's phases and printed
    at the end as the table docs/DEPLOYMENT.md's capacity model is computed from."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, int]] = []

    def add(self, component: str, unit: str, cpu_seconds: float, count: int) -> None:
        if count:
            self.rows.append((component, unit, cpu_seconds, count))

    def print(self, title: str) -> None:
        print(f"\n{title}\n")
        print("| component | per | CPU ms | per core /s |")
        print("|---|---|---:|---:|")
        for component, unit, cpu_seconds, count in self.rows:
            per_ms = cpu_seconds / count * 1000
            per_core = f"{1000 / per_ms:,.0f}" if per_ms > 0 else "-"
            digits = 4 if per_ms < 0.01 else 3
            print(f"| {component} | {unit} | {per_ms:.{digits}f} | {per_core} |")
