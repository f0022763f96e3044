"""The production shape for the drills: its own redis-server (AOF everysec) and its own
PostgreSQL, started once per session (`bench/drill_stack.py`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import REQUIRE_SERVICES

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from drill_stack import UNLIMITED_TENANTS, Stack, production_shape  # noqa: E402

FREE_QUOTA = 30


def _binaries_missing() -> str | None:
    if shutil.which("redis-server") is None:
        return "redis-server is not installed"
    try:
        subprocess.run(["pg_config", "--bindir"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return "PostgreSQL server binaries (pg_config) are not installed"
    return None


@pytest.fixture(scope="session")
def server_binaries() -> None:
    """redis-server and PostgreSQL's server binaries, or a skip (a failure when services
    are required)."""
    missing = _binaries_missing()
    if missing is not None:
        if REQUIRE_SERVICES:
            raise RuntimeError(missing)
        pytest.skip(missing)


@pytest.fixture(scope="session")
def drill_stack(geodata_dir: Path, server_binaries: None) -> Iterator[Stack]:
    extra_env = {**UNLIMITED_TENANTS, "GEOSVC_FREE_QUOTA": str(FREE_QUOTA)}
    with production_shape(aof="everysec", geodata_dir=geodata_dir, extra_env=extra_env) as stack:
        yield stack
