"""Running the multi-host drill (bench/multihost_drill.py --short) for its opt-in tests
(tests/drills/test_multihost.py, test_multihost_cluster.py), and reading its phases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import REQUIRE_SERVICES

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from multihost_drill import missing  # noqa: E402


def run_drill(out: Path, make_target: str, *options: str) -> dict[str, Any]:
    """The drill's result (its JSON written to `out`), or a skip: opt-in through
    `make <make_target>` (GEOSVC_MULTIHOST_DRILL=1), root only."""
    if os.environ.get("GEOSVC_MULTIHOST_DRILL") != "1":
        pytest.skip(f"opt-in: make {make_target}")
    reason = missing()
    if reason is not None:
        if REQUIRE_SERVICES and os.geteuid() == 0:
            raise RuntimeError(reason)
        pytest.skip(reason)
    argv = [sys.executable, str(BENCH / "multihost_drill.py"), "--short", *options]
    done = subprocess.run([*argv, "--json", str(out)], capture_output=True, text=True, timeout=420)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout)  # its tables: the make target shows them (-rP)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def phase(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(row for row in result["phases"] if row["phase"] == name)
