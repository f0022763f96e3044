"""Test servers forked from a process that has imported the app already.

A test server is uvicorn on the app in a process of its own (live_server.py). Started as
a new interpreter it spends 3-5 s of CPU before it answers, nearly all of it importing
FastAPI, the MCP SDK, SQLAlchemy and the app's models, and a full run starts dozens.
The zygote, one per pytest process, imports them once and forks each server from
itself: the same uvicorn.run call, with the server's own environment, log file and
process id. What could differ is what a module reads at import time: the child reads
the settings again where they are cached (app.runtime.reload_settings, as `geosvc dev`
does; Celery's configuration is built at import), the zygote refuses to fork if importing
started a thread, and servers whose environment sets what Python, Prometheus or
OpenTelemetry read at import are started as new interpreters as before (`forkable`).

The servers are the zygote's children: it reaps them and writes each exit status, as
subprocess.Popen reports it, to a file that ForkedProcess reads.

Run as `python -m tests.support.zygote`: it reads one JSON request a line on stdin and
answers each with the server's process id.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Any

# read by Python, prometheus_client or OpenTelemetry when they are imported
_IMPORT_TIME_ENV = ("PYTHON", "PROMETHEUS", "OTEL_")


class ForkedProcess:
    """The part of subprocess.Popen that tests use, for a server the zygote forked."""

    def __init__(self, pid: int, status_path: Path) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._status_path = status_path

    def poll(self) -> int | None:
        if self.returncode is None and self._status_path.exists():
            self.returncode = int(self._status_path.read_text())
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"server {self.pid}", timeout or 0.0)
            time.sleep(0.01)  # polling the zygote's status file, with a deadline
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass  # exited, not reaped yet

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    """The pytest process's side: starts the zygote on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}

    def forkable(self, env: dict[str, str]) -> bool:
        """Would a server with this environment import the app as the zygote did?"""
        zygote_env = self._env or _zygote_env()
        keys = {k for k in {*env, *zygote_env} if k.startswith(_IMPORT_TIME_ENV)}
        return all(env.get(k) == zygote_env.get(k) for k in keys)

    def serve(self, env: dict[str, str], log_path: Path, host: str, port: int) -> ForkedProcess:
        """Fork a server (uvicorn on the app on host:port, its output to log_path)."""
        status_path = log_path.with_name(log_path.name + ".exit")
        status_path.unlink(missing_ok=True)
        request = {
            "env": env,
            "log": str(log_path),
            "status": str(status_path),
            "host": host,
            "port": port,
        }
        with self._lock:
            process = self._started()
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        if not answer:
            raise RuntimeError("the test-server zygote exited")
        return ForkedProcess(int(answer), status_path)

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            self._env = _zygote_env()
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.zygote"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self._env,
            )
            assert self._process.stdout is not None
            if self._process.stdout.readline() != b"ready\n":
                self._process.wait()
                raise RuntimeError("the test-server zygote did not start (see its stderr)")
        return self._process


def _zygote_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}


ZYGOTE = Zygote()

# --- the zygote process --------------------------------------------------------------

_status_paths: dict[int, str] = {}


def _reap(_signum: int, _frame: Any) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        path = _status_paths.pop(pid, None)
        if path is not None:  # written whole, then renamed: a reader never sees half
            Path(path + ".tmp").write_text(str(os.waitstatus_to_exitcode(status)))
            os.replace(path + ".tmp", path)


def _serve(request: dict[str, Any]) -> None:
    """In the forked child: become the server, then exit as the interpreter would."""
    import uvicorn

    from app.http.server import uvicorn_options
    from app.runtime import reload_settings

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    reload_settings()
    code = 0
    try:
        uvicorn.run(
            "app.main:create_app",
            factory=True,
            host=request["host"],
            port=request["port"],
            log_level="info",
            **uvicorn_options(),
        )
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main(requests: IO[str], answers: IO[str]) -> None:
    import uvicorn  # noqa: F401  (what every server imports, once)

    import app.http.server  # noqa: F401
    import app.main  # noqa: F401
    import app.runtime  # noqa: F401

    if threading.active_count() != 1:
        raise SystemExit("importing the app started a thread: forking would lose it")
    signal.signal(signal.SIGCHLD, _reap)
    answers.write("ready\n")
    answers.flush()
    for line in requests:
        request = json.loads(line)
        # SIGCHLD waits until the child's status path is recorded
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _serve(request)
        _status_paths[pid] = request["status"]
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        answers.write(f"{pid}\n")
        answers.flush()


if __name__ == "__main__":
    main(sys.stdin, sys.stdout)
