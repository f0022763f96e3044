"""PostgreSQL failover at small scale (`bench/pg_failover.py`): a primary and a synchronous
streaming standby of its own on free ports (never the machine's PostgreSQL), the stack on
one multi-host URL; the primary dies (kill -9, after its WAL sender stood still for a second),
the standby is promoted. No row the primary committed is lost, nothing is charged twice,
nothing answers 500 or hangs, and control-plane writes resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from pg_failover import options, print_table, run_mode

pytestmark = pytest.mark.drill


@pytest.mark.usefixtures("server_binaries")
def test_synchronous_standby_promoted_loses_no_committed_ledger_row(geodata_dir: Path) -> None:
    args = options(
        accounts=2,
        clients=2,
        before=2.0,
        warm=20,
        lag=1.0,
        gap=1.0,
        after=3.0,
        settle=30.0,
        workers=1,
    )
    outcome = run_mode("sync", args, geodata_dir)
    print_table([outcome])  # shown with -s or on failure
    assert outcome.old_primary > 0, outcome
    assert outcome.lost_rows == 0, outcome
    assert outcome.served_not_billed == 0, outcome
    assert outcome.charged_twice == 0, outcome
    assert outcome.duplicate_ids == 0, outcome
    assert outcome.counter_off == 0, outcome
    assert outcome.calls.ok > 0, outcome
    assert outcome.calls.hung == 0, outcome.calls
    assert outcome.other_failures == 0, outcome.calls.failed
    assert outcome.calls.statuses[500] == 0, outcome.calls.statuses
    assert outcome.writes.statuses["500"] == 0, outcome.writes.statuses
    assert outcome.write_resume_s is not None, outcome.writes
    assert outcome.write_resume_s < 15, outcome
