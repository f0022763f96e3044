"""Issue 10, item 11: `geosvc dev` refuses a busy port or a data dir in use before doing
any work, and `make run PORT=…` picks the port (real `geosvc dev` processes, forked from
the command zygote as `geosvc worker` is: tests/support/zygote.py; what they print is
read from the file their output goes to)."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from app.kit.embedded_redis import free_port
from tests.support.zygote import ChildProcess, start_command

ROOT = Path(__file__).resolve().parent.parent


def dev_env(data_dir: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    return {**env, "GEOSVC_DATA_DIR": str(data_dir), **settings}


def start_dev(
    data_dir: Path, port: int, terminal: Path, *, sigint_ignored: bool = False, **settings: str
) -> ChildProcess:
    """`geosvc dev --port <port>` on `data_dir`, leading a process group of its own (as a
    terminal's job), its stdout and stderr to the file `terminal`."""
    argv = ["dev", "--port", str(port)]
    return start_command(
        dev_env(data_dir, **settings), argv, terminal, sigint_ignored=sigint_ignored
    )


def run_dev(tmp_path: Path, port: int) -> tuple[int, str]:
    """A `geosvc dev` on tmp_path/data to its end: exit status and output (spaces as one)."""
    terminal = tmp_path / "terminal.txt"
    returncode = start_dev(tmp_path / "data", port, terminal).wait(timeout=60)
    return returncode, " ".join(terminal.read_text(errors="replace").split())


def test_a_busy_port_is_refused_before_any_work(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        returncode, output = run_dev(tmp_path, port)
    assert returncode == 1, output
    assert f"127.0.0.1:{port} is already in use" in output
    assert "--port 8001" in output
    assert "Demo key" not in output
    assert not (tmp_path / "data" / "geosvc.db").exists()  # no migration, no demo key


def test_a_second_copy_on_the_same_data_dir_leaves_the_first_alone(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    # the running copy holds this lock for its whole life
    with (tmp_path / "data" / "dev.lock").open("a+") as first:
        fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
        returncode, output = run_dev(tmp_path, free_port())
    assert returncode == 1, output
    assert "already running" in output
    assert "Demo key" not in output
    assert not (tmp_path / "data" / "geosvc.db").exists()


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
    data_dir, terminal = tmp_path / "data", tmp_path / "terminal.txt"
    port = free_port()
    # As a background job of a script starts it: with SIGINT ignored.
    dev = start_dev(data_dir, port, terminal, sigint_ignored=True)
    try:
        # The database is migrated just before the first index build starts.
        deadline = time.monotonic() + 60
        while not (data_dir / "geosvc.db").exists():
            assert dev.poll() is None, terminal.read_text()
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
        assert not list((data_dir / "indices").glob("*/meta.json"))  # no half-built index
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGKILL)
            dev.wait()


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


class DevServer:
    """A real `geosvc dev` on `data_dir`; what it prints (stdout and stderr) goes to a file
    beside the data dir, read as `lines`."""

    def __init__(self, data_dir: Path, **settings: str) -> None:
        self.data_dir = data_dir
        self.settings = settings
        self._start()

    def _start(self) -> None:
        self.port = free_port()
        self.terminal = self.data_dir.with_name(f"{self.data_dir.name}-terminal-{self.port}.txt")
        self.process = start_dev(self.data_dir, self.port, self.terminal, **self.settings)

    @property
    def lines(self) -> list[str]:
        """The whole lines printed so far."""
        if not self.terminal.exists():
            return []
        return self.terminal.read_text(errors="replace").split("\n")[:-1]

    def wait_for_announcement(self, deadline_s: float = 90.0) -> list[str]:
        """The lines printed up to the end of the announcement ("Stop  Ctrl-C"). A port
        that was free when picked can be taken before the server binds it (any process's
        outgoing connection may get it): then once more on another port."""
        deadline = time.monotonic() + deadline_s
        retried = False
        while not any(line.startswith("Stop ") for line in self.lines):
            if self.process.poll() is not None and not retried:
                self.process.wait()
                if any("address already in use" in line for line in self.lines):
                    retried = True
                    self._start()
                    continue
            assert self.process.poll() is None, "\n".join(self.lines)
            assert time.monotonic() < deadline, "\n".join(self.lines)
            time.sleep(0.05)
        return list(self.lines)

    def assert_clean_stop(self, signum: signal.Signals) -> None:
        """Issue 55, item 5: Ctrl-C (SIGINT) or a kill (SIGTERM) to the main process alone
        is a clean stop with exit 0 (`make run` ended in `make: *** Error 130`): the
        workers, beat and the embedded Redis go with it and the port is free again."""
        os.kill(self.process.pid, signum)
        returncode = self.process.wait(timeout=30)
        assert returncode == 0, "\n".join(self.lines)
        deadline = time.monotonic() + 10
        while processes_in_group(self.process.pid):
            assert time.monotonic() < deadline, processes_in_group(self.process.pid)
            time.sleep(0.05)
        assert port_is_free(self.port)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        deadline = time.monotonic() + 10
        while processes_in_group(self.process.pid):
            assert time.monotonic() < deadline, processes_in_group(self.process.pid)
            time.sleep(0.05)


def field(lines: list[str], label: str) -> str:
    found = [line.removeprefix(label).strip() for line in lines if line.startswith(label)]
    assert found, "\n".join(lines)
    return found[0]


def geocode_status(port: int, key: str) -> int:
    response = httpx.get(
        f"http://127.0.0.1:{port}/v1/geocode",
        params={"query": "Austin, TX", "limit": "1"},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    return response.status_code


@pytest.fixture
def dev_data_dir(tmp_path: Path, geodata_dir: Path) -> Path:
    """A data dir whose indices are the session's build (no minute-long build per start)."""
    from app.geodata.indices.store import index_root

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    index_root(data_dir).symlink_to(index_root(geodata_dir).resolve(), target_is_directory=True)
    return data_dir


class TestTheDemoKey:
    """One data dir across three starts (each `geosvc dev` start is a fifth of a minute):
    the first says only what a person needs; a restart keeps the key and the password;
    without the private copy the next start makes a new key and revokes the old. The
    first two end as a person ends them, with Ctrl-C and with a kill (a clean stop). The
    third, with a per-address limit of 3 on /register, is also the start on which no
    proxy is trusted (`_no_proxy_is_trusted`): a start of its own would cost as much."""

    def test_first_start_restart_a_lost_copy_and_no_trusted_proxy(self, dev_data_dir: Path) -> None:
        key, sign_in = self._first_start(dev_data_dir)
        self._restart_keeps_them(dev_data_dir, key, sign_in)
        # The database holds the key's HMAC, never its secret.
        secret = key.rsplit("_", 1)[1].encode()
        for stored in dev_data_dir.glob("geosvc.db*"):
            assert secret not in stored.read_bytes()

        (dev_data_dir / "demo.txt").unlink()
        third = DevServer(dev_data_dir, GEOSVC_OAUTH_RATE_LIMIT_PER_IP="3")
        try:
            new_key = field(third.wait_for_announcement(), "Demo key")
            assert new_key != key
            assert geocode_status(third.port, new_key) == 200
            assert geocode_status(third.port, key) == 401
            self._no_proxy_is_trusted(third, new_key)
        finally:
            third.stop()

    @staticmethod
    def _no_proxy_is_trusted(dev: DevServer, key: str) -> None:
        """Issue 51, item 2: `geosvc dev` trusts no proxy. X-Forwarded-For does not move a
        local client to another address (the per-address limit of /register still counts
        it), and X-Proxy-Request-ID does not make a repeated call free."""
        base = f"http://127.0.0.1:{dev.port}"
        registrations = [
            httpx.post(
                f"{base}/register",
                json={"redirect_uris": ["http://127.0.0.1/callback"]},
                headers={"X-Forwarded-For": f"198.51.100.{n}"},
                timeout=30,
            )
            for n in range(1, 5)
        ]
        statuses = [answer.status_code for answer in registrations]
        assert 429 not in statuses[:3], statuses
        assert statuses[3] == 429, statuses
        repeat = {
            "Authorization": f"Bearer {key}",
            "X-Proxy-Request-ID": "0123456789abcdef0123456789abcdef",
        }
        calls = [
            httpx.get(
                f"{base}/v1/geocode",
                params={"query": "Austin, TX", "limit": "1"},
                headers=repeat,
                timeout=30,
            )
            for _ in range(2)
        ]
        assert [call.status_code for call in calls] == [200, 200]
        assert [call.headers["credits-charged"] for call in calls] == ["1", "1"]
        used = [int(call.headers["credits-used"]) for call in calls]
        assert used[1] == used[0] + 1, used

    @staticmethod
    def _first_start(dev_data_dir: Path) -> tuple[str, str]:
        dev = DevServer(dev_data_dir)
        try:
            lines = dev.wait_for_announcement()
            key = field(lines, "Demo key")
            before_key = lines[: next(i for i, line in enumerate(lines) if key in line)]
            assert len(before_key) <= 20, "\n".join(lines)
            assert len(lines) <= 20, "\n".join(lines)
            text = "\n".join(lines)
            for noise in ("celery@", "-------------- ", "superuser", "Uvicorn running", "INFO"):
                assert noise not in text
            assert text.count("GEOSVC_SMTP_URL") == 1  # where mail goes, said once
            assert f"http://127.0.0.1:{dev.port}/mcp" in field(lines, "MCP URL")
            assert "Ctrl-C" in field(lines, "Stop")

            copy = dev_data_dir / "demo.txt"
            assert copy.stat().st_mode & 0o777 == 0o600
            assert key in copy.read_text()
            assert geocode_status(dev.port, key) == 200

            # The access log goes to the log file, not over the key.
            log = dev_data_dir / "dev.log"
            deadline = time.monotonic() + 10
            while "GET /v1/geocode" not in log.read_text():
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            assert not [line for line in dev.lines if "GET /v1/geocode" in line]
            # No Celery banner and no root warning, not even in the log file.
            for noise in ("-------------- ", "superuser privileges", "celery beat v"):
                assert noise not in log.read_text()
            # Where mail goes is said once: the workers' own start-up lines came before
            # the key (both pools answered first), so they went to the log file only.
            assert "\n".join(dev.lines).count("GEOSVC_SMTP_URL") == 1, dev.lines
            dev.assert_clean_stop(signal.SIGINT)
            return key, field(lines, "Dashboard")
        finally:
            dev.stop()

    @staticmethod
    def _restart_keeps_them(dev_data_dir: Path, key: str, sign_in: str) -> None:
        second = DevServer(dev_data_dir)
        try:
            again = second.wait_for_announcement()
            assert field(again, "Demo key") == key
            assert field(again, "Dashboard").split("(")[1] == sign_in.split("(")[1]
            assert "the same as on the last start" in "\n".join(again)
            assert geocode_status(second.port, key) == 200
            password = sign_in.split(" / ")[1].rstrip(")")
            signed_in = httpx.post(
                f"http://127.0.0.1:{second.port}/auth/signin",
                json={"email": "demo@example.com", "password": password},
                headers={"Origin": f"http://127.0.0.1:{second.port}"},
                timeout=30,
            )
            assert signed_in.status_code == 200, signed_in.text
            second.assert_clean_stop(signal.SIGTERM)
        finally:
            second.stop()
