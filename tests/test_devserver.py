"""Issue 10, item 11: `geosvc dev` refuses a busy port or a data dir in use before doing
any work, and `make run PORT=…` picks the port (real `geosvc dev` processes)."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
from pathlib import Path

from app.embedded_redis import free_port

ROOT = Path(__file__).resolve().parent.parent


def run_dev(data_dir: Path, port: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env["GEOSVC_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "dev", "--port", str(port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_busy_port_is_refused_before_any_work(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_dev(tmp_path, port)
    output = " ".join(result.stdout.split())
    assert result.returncode == 1, output + result.stderr
    assert f"127.0.0.1:{port} is already in use" in output
    assert "--port 8001" in output
    assert "Demo key" not in output
    assert not (tmp_path / "geosvc.db").exists()  # no migration, no demo key, no new key


def test_a_second_copy_on_the_same_data_dir_leaves_the_first_alone(tmp_path: Path) -> None:
    # the running copy holds this lock for its whole life
    with (tmp_path / "dev.lock").open("a+") as first:
        fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = run_dev(tmp_path, free_port())
    output = " ".join(result.stdout.split())
    assert result.returncode == 1, output + result.stderr
    assert "already running" in output
    assert "Demo key" not in output
    assert not (tmp_path / "geosvc.db").exists()


def test_make_run_takes_the_port() -> None:
    result = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", "run", "PORT=8001"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "geosvc dev --port 8001" in result.stdout
