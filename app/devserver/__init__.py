"""`geosvc dev`: everything in one process on the embedded default.

Migrates the SQLite database, builds or loads the geodata indices, makes the demo
account (its key and password kept across restarts: demo.py), starts three `geosvc worker`
(thread pools: paying calls; free and heavy calls and billing; jobs) and `geosvc beat` as child
processes on the embedded Redis, then serves the api: one command, the production code
path. (A Celery worker started in a thread of the api process gets a DisabledBackend in
its pool threads and stores no results, so the worker gets a process of its own.)
What reaches the terminal and what only the log file: output.py.
"""

from __future__ import annotations

import fcntl
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from app.devserver.demo import DEMO_FILE, DemoAccount, demo_account, write_copy
from app.devserver.output import DevOutput
from app.kit.embedded_redis import die_with_parent

# Three pools, as in production: paying calls; free and heavy calls and billing (niced);
# bulk jobs' chunks (SCHED_IDLE: `geosvc worker` picks it for `jobs` alone), so a job's
# threads never hold the interpreter lock a free call or a drain waits for.
WORKER_POOLS = [
    ("tools", "dev@%h"),
    ("tools.free,tools.heavy,billing", "dev-bulk@%h"),
    ("jobs", "dev-jobs@%h"),
]
# How long the first index build took on 2 cores (issue 38: 45 s on a fresh clone).
INDEX_BUILD_EXPECTED = "about a minute on 2 cores"


def start_worker_and_beat(output: DevOutput) -> list[subprocess.Popen[bytes]]:
    """`geosvc worker` (thread pool) and `geosvc beat` as child processes on this process's
    Settings, without Celery's banners, their output copied by `output`; they exit when
    this process does."""
    command = [sys.executable, "-m", "app.cli"]
    worker = [*command, "worker", "--quiet", "--pool", "threads", "--concurrency", "4"]
    beat = [*command, "beat", "--quiet", "--loglevel", "warning"]
    children = [
        *(
            subprocess.Popen(
                [*worker, "--queues", queues, "--hostname", name, "--loglevel", "warning"],
                preexec_fn=die_with_parent,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            for queues, name in WORKER_POOLS
        ),
        subprocess.Popen(
            beat, preexec_fn=die_with_parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        ),
    ]
    for child in children:
        output.relay(child)
    return children


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


@contextmanager
def only_copy_on(data_dir: Path) -> Iterator[None]:
    """Refuse a second `geosvc dev` on the same data dir: it would replace the running
    copy's demo key and share its embedded Redis files."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with (data_dir / "dev.lock").open("a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DevServerRefused(
                f"another `geosvc dev` is already running on {data_dir.resolve()}; stop it "
                "first, or give this one its own GEOSVC_DATA_DIR"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class DevServerRefused(Exception):
    pass


def _wait_for_workers(deadline_s: float = 30.0) -> bool:
    """Both pools answer a ping (so their start-up lines come before the key, not after)."""
    from app.queue import celery_app

    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if len(celery_app.control.ping(timeout=0.5)) >= len(WORKER_POOLS):
                return True
        except Exception:  # broker not answering yet: keep asking until the deadline
            time.sleep(0.2)
    return False


def shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is under it (`.geosvc/demo.txt`)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def load_indices(console: Console) -> None:
    """Load the geodata indices, saying so first when they must be built (the first start,
    or a new version of a dataset package)."""
    from app.geodata import service as geodata
    from app.geodata.indices import store
    from app.kit.config import get_settings

    if store.is_current(store.index_dir(get_settings().data_dir)):
        geodata.warm_up()
        return
    console.print(
        "Building the geodata indices from the packaged datasets (first start only, "
        f"{INDEX_BUILD_EXPECTED}; later starts load them in under a second) ...",
        soft_wrap=True,
    )
    started = time.monotonic()
    geodata.warm_up()
    console.print(f"  built in {time.monotonic() - started:.0f} s")


def announcement(demo: DemoAccount, base: str, data_dir: Path, output: DevOutput) -> list[str]:
    """What a person needs, in plain text (printed, and kept in demo.txt)."""
    from app.kit.config import get_settings
    from app.mail.transport import startup_line

    settings = get_settings()
    log = shown_path(output.path)
    if settings.smtp_url is None:
        mail = (
            "not sent (no GEOSVC_SMTP_URL): each e-mail is printed below and kept in "
            f"{log}; sign-ups are verified at once"
        )
    else:
        mail = startup_line(settings).removeprefix("mail: ")
    copy = shown_path(data_dir / DEMO_FILE)
    kept = (
        f"the same as on the last start (kept while {copy} holds it and it works)"
        if demo.kept
        else f"new on this start; kept on the next ones while {copy} holds it"
    )
    return [
        f"Dashboard  {base}/   (demo sign-in: {demo.email} / {demo.password})",
        f"MCP URL    {base}/mcp",
        f"HTTP API   {base}/v1   (reference: {base}/v1/docs)",
        f"Demo key   {demo.api_key}",
        f"           send it as  Authorization: Bearer {demo.api_key}",
        f"           {kept}",
        f"Mail       {mail}",
        f"Logs       {log} (the api's requests, workers, beat); warnings also show here",
        f"Saved      these lines in {copy} (readable by you only)",
        "Stop       Ctrl-C",
    ]


def serve(*, host: str, port: int, console: Console) -> None:
    import uvicorn

    from app.http.server import uvicorn_options
    from app.kit.config import get_settings
    from app.kit.db import migrate, new_session
    from app.main import create_app

    data_dir = get_settings().data_dir
    console.print(
        f"geosvc dev: the whole service on the embedded default, data in {shown_path(data_dir)}"
    )
    output = DevOutput(data_dir)
    migrate()
    load_indices(console)
    with new_session() as session:
        demo = demo_account(session, data_dir)
        session.commit()
    console.print("Starting the api, three workers and beat ...")
    children = start_worker_and_beat(output)
    base = f"http://{host}:{port}"
    app = create_app()
    output.capture_logging()  # after create_app: it sets up the root logger
    # log_config=None: uvicorn's loggers (its access log too) go through ours.
    config = uvicorn.Config(
        app, host=host, port=port, log_level="info", log_config=None, **uvicorn_options()
    )
    server = uvicorn.Server(config)

    def announce() -> None:
        """Once the workers answer and uvicorn listens; the routine lines before it went
        to the log file only."""
        if not _wait_for_workers():
            console.print(f"[yellow]The workers did not answer in 30 s[/]: see {output.path}")
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.should_exit:
            return
        lines = announcement(demo, base, data_dir, output)
        write_copy(data_dir, lines)
        console.print()
        for line in lines:
            label, rest = line[:11], line[11:]
            console.print(f"[bold]{escape(label)}[/]{escape(rest)}", soft_wrap=True)
        console.print()
        output.announced.set()

    threading.Thread(target=announce, name="announce", daemon=True).start()
    try:
        server.run()
    except KeyboardInterrupt:
        # uvicorn re-raises Ctrl-C or SIGTERM once it has shut down: after the children
        # (below), the embedded Redis and the lock (the caller's) are let go, that is a
        # clean stop, exit 0 (`make run` then ends without "Error 130").
        console.print("geosvc dev: stopped")
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
