"""Test servers, workers and migrations forked from a process that has imported the app.

A test server is uvicorn on the app in a process of its own (live_server.py); a worker
is `geosvc worker` (celery_worker.py), a migration `geosvc migrate` (services.py).
Started as a new interpreter, a server spends 2-5 s of CPU before it answers and a
worker about 2 s, most of it importing FastAPI, the MCP SDK, Celery, SQLAlchemy, numpy
and the app, and a full run starts about 70 servers and 60 workers. A zygote per kind
and pytest process imports them once and forks each from itself: the same uvicorn.run
call or `geosvc` command line, with its own environment, log file and process id.

What could differ is what a module reads at import time: the child reads the settings
again where they are cached (app.runtime.reload_settings, as `geosvc dev` does; Celery's
configuration is built at import), a zygote refuses to fork if importing started a
thread, and processes whose environment sets what Python, Prometheus or OpenTelemetry
read at import are started as new interpreters as before (`forkable`). The command
zygote stops short of the modules that define metrics: `geosvc worker` points
prometheus_client at its metrics directory before they are defined.

The forked processes are the zygote's children: it reaps them and writes each exit
status, as subprocess.Popen reports it, to a file that ForkedProcess reads.

Run as `python -m tests.support.zygote server|command`: it reads one JSON request a line
on stdin and answers each with the forked process's id.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn, Protocol

# read by Python, prometheus_client or OpenTelemetry when they are imported
_IMPORT_TIME_ENV = ("PYTHON", "PROMETHEUS", "OTEL_")


class ChildProcess(Protocol):
    """subprocess.Popen, or a process a zygote forked (ForkedProcess)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


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
    """The pytest process's side: starts the zygote of one kind on first use."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}

    def forkable(self, env: dict[str, str]) -> bool:
        """Would a server with this environment import the app as the zygote did?"""
        zygote_env = self._env or _zygote_env()
        keys = {k for k in {*env, *zygote_env} if k.startswith(_IMPORT_TIME_ENV)}
        return all(env.get(k) == zygote_env.get(k) for k in keys)

    def fork(self, env: dict[str, str], log_path: Path, **arguments: Any) -> ForkedProcess:
        """Fork a server (arguments: host, port) or a command (arguments: argv, the
        `geosvc` command line), its output to log_path."""
        status_path = log_path.with_name(log_path.name + ".exit")
        status_path.unlink(missing_ok=True)
        request = {"env": env, "log": str(log_path), "status": str(status_path), **arguments}
        with self._lock:
            process = self._started()
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the {self.kind} zygote exited")
        return ForkedProcess(int(answer), status_path)

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            self._env = _zygote_env()
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.zygote", self.kind],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self._env,
            )
            assert self._process.stdout is not None
            if self._process.stdout.readline() != b"ready\n":
                self._process.wait()
                raise RuntimeError(f"the {self.kind} zygote did not start (see its stderr)")
        return self._process


def _zygote_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}


SERVERS = Zygote("server")
COMMANDS = Zygote("command")


def start_command(
    env: dict[str, str], argv: list[str], log_path: Path, *, sigint_ignored: bool = False
) -> ChildProcess:
    """`geosvc <argv>`, its output to log_path, leading a process group of its own (so
    that killpg reaches a worker's pool): forked where `forkable`, else a new interpreter.
    `sigint_ignored`: started with SIGINT ignored, as a script's background job is."""
    if COMMANDS.forkable(env):
        return COMMANDS.fork(env, log_path, argv=argv, sigint_ignored=sigint_ignored)
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *argv],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_ignore_sigint if sigint_ignored else None,
        )


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    """uvicorn on the app, as live_server.py runs it in a new interpreter."""
    import uvicorn

    from app.http.server import uvicorn_options

    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=request["host"],
        port=request["port"],
        log_level="info",
        **uvicorn_options(),
    )


def _command(request: dict[str, Any]) -> None:
    """`geosvc ...` (request["argv"]), in a process group of its own (main)."""
    from app.cli import main

    sys.argv = ["geosvc", *request["argv"]]
    main()


def _become(run: Callable[[dict[str, Any]], None], request: dict[str, Any]) -> NoReturn:
    """In the forked child: take the request's output and environment, run, then exit
    as the interpreter would."""
    from app.runtime import reload_settings

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
    if request.get("sigint_ignored"):
        _ignore_sigint()
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    code = 0
    try:
        reload_settings()
        run(request)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# What each kind imports before it forks. A worker's metrics are defined after
# `geosvc worker` has set their multiprocess directory, so not here.
PRELOADED = {
    "server": ("uvicorn", "app.http.server", "app.main", "app.runtime"),
    "command": (
        "app.cli",
        "app.runtime",
        "app.queue.celery",
        "app.observability.setup",
        "app.geodata.catalogue",
        "app.geodata.providers.embedded",
        "celery.apps.worker",
        "celery.bin.celery",
        "celery.concurrency.prefork",
        "celery.concurrency.thread",
    ),
}
RUNS = {"server": _serve, "command": _command}
# Commands lead a process group, as a new interpreter started with start_new_session
# does, so that killpg reaches a worker's pool. Set on both sides of the fork: done
# before the pid is answered, whichever runs first.
OWN_GROUP = {"command"}


def main(kind: str, requests: IO[str], answers: IO[str]) -> None:
    for module in PRELOADED[kind]:
        importlib.import_module(module)
    if kind == "command" and "app.observability.metrics" in sys.modules:
        raise SystemExit("the command zygote imported the metrics before `geosvc worker` could")
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
            if kind in OWN_GROUP:
                os.setpgid(0, 0)
            _become(RUNS[kind], request)
        if kind in OWN_GROUP:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.setpgid(pid, pid)  # the child may have exited already
        _status_paths[pid] = request["status"]
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        answers.write(f"{pid}\n")
        answers.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.stdin, sys.stdout)
