"""Issue 10, item 11: `geosvc dev` refuses a busy port or a data dir in use before doing
any work, and `make run PORT=…` picks the port (real `geosvc dev` processes)."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def processes_in_group(pgid: int) -> list[str]:
    """Command lines of the live processes of a process group (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append((entry / "cmdline").read_text().replace("\0", " ").strip())
        except (OSError, IndexError, ValueError):
            continue  # exited while we looked
    return found


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_during_the_first_index_build_stops_everything(
    tmp_path: Path, signum: signal.Signals
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env["GEOSVC_DATA_DIR"] = str(tmp_path)
    port = free_port()
    dev = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "dev", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # As a background job of a script starts it: with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        # The database is migrated just before the first index build starts.
        deadline = time.monotonic() + 60
        while not (tmp_path / "geosvc.db").exists():
            assert dev.poll() is None, dev.stdout.read() if dev.stdout else ""
            assert time.monotonic() < deadline, "geosvc dev never reached the index build"
            time.sleep(0.05)

        # Ctrl-C (or a plain kill), to the main process alone: what it started must be
        # stopped by it, not by the terminal signalling the whole group.
        os.kill(dev.pid, signum)
        dev.wait(timeout=30)

        deadline = time.monotonic() + 10
        while processes_in_group(dev.pid):  # the embedded Redis and anything else it started
            assert time.monotonic() < deadline, processes_in_group(dev.pid)
            time.sleep(0.05)
        assert port_is_free(port)
        assert not list((tmp_path / "indices").glob("*/meta.json"))  # no half-built index
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGKILL)
            dev.wait()


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0
