"""`geosvc dev`: everything in one process on the embedded default.

Migrates the SQLite database, builds or loads the geodata indices, makes a demo account
with a fresh API key, starts two `geosvc worker` (thread pools: paying calls; free and
heavy calls and billing) and `geosvc beat` as child
processes on the embedded Redis, then serves the api: one command, the production code
path. (A Celery worker started in a thread of the api process gets a DisabledBackend in
its pool threads and stores no results, so the worker gets a process of its own.)
"""

from __future__ import annotations

import fcntl
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from sqlmodel import Session, select

from app.embedded_redis import die_with_parent

DEMO_EMAIL = "demo@example.com"
DEMO_KEY_NAME = "demo (geosvc dev)"


@dataclass(frozen=True)
class DemoAccount:
    email: str
    password: str
    api_key: str


def demo_account(session: Session) -> DemoAccount:
    """The demo account with a new password and a new key (the previous demo key is revoked)."""
    from app.accounts.service import create_user, set_password
    from app.api_keys.service import create_key, list_keys, revoke_key
    from app.models import User

    password = secrets.token_urlsafe(12)
    user = session.exec(select(User).where(User.email == DEMO_EMAIL)).first()
    if user is None:
        user = create_user(session, email=DEMO_EMAIL, password=password, name="Demo")
    else:
        set_password(user, password)
        session.add(user)
    for key in list_keys(session, user.id):
        if key.name == DEMO_KEY_NAME:
            revoke_key(session, user.id, key.key_id)
    _key, plaintext = create_key(session, user.id, DEMO_KEY_NAME)
    return DemoAccount(DEMO_EMAIL, password, plaintext)


def start_worker_and_beat() -> list[subprocess.Popen[bytes]]:
    """`geosvc worker` (thread pool) and `geosvc beat` as child processes on this process's
    Settings; they exit when this process does."""
    command = [sys.executable, "-m", "app.cli"]
    worker = [*command, "worker", "--pool", "threads", "--concurrency", "4"]
    beat = [*command, "beat", "--loglevel", "warning"]
    # Two pools, as in production: paying calls; free and heavy calls and billing (niced).
    pools = [("tools", "dev@%h"), ("tools.free,tools.heavy,billing", "dev-bulk@%h")]
    return [
        *(
            subprocess.Popen(
                [*worker, "--queues", queues, "--hostname", name, "--loglevel", "warning"],
                preexec_fn=die_with_parent,
            )
            for queues, name in pools
        ),
        subprocess.Popen(beat, preexec_fn=die_with_parent),
    ]


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


def _wait_for_worker(deadline_s: float = 30.0) -> None:
    from app.queue import celery_app

    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if celery_app.control.ping(timeout=0.5):
                return
        except Exception:  # broker not answering yet: keep asking until the deadline
            time.sleep(0.2)


def serve(*, host: str, port: int, console: Console) -> None:
    import uvicorn

    from app.db import migrate, new_session
    from app.geodata import service as geodata
    from app.http.server import uvicorn_options
    from app.main import create_app

    migrate()
    with console.status("Loading the geodata indices (built on the first run)"):
        geodata.warm_up()
    with new_session() as session:
        demo = demo_account(session)
        session.commit()
    children = start_worker_and_beat()
    base = f"http://{host}:{port}"
    config = uvicorn.Config(
        create_app(), host=host, port=port, log_level="info", **uvicorn_options()
    )
    server = uvicorn.Server(config)

    def announce() -> None:
        """Last, after the worker's and uvicorn's start-up lines, so it stays on screen."""
        _wait_for_worker()
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.should_exit:
            return
        from app.config import get_settings
        from app.mail.transport import startup_line

        for line in (
            f"[bold]Mail[/]       {startup_line(get_settings()).removeprefix('mail: ')}",
            f"[bold]Dashboard[/]  {base}/   (demo sign-in: {demo.email} / {demo.password})",
            f"[bold]MCP URL[/]    {base}/mcp",
            f"[bold]Demo key[/]   {demo.api_key}",
            f"             send it as  Authorization: Bearer {demo.api_key}",
        ):
            console.print(line, soft_wrap=True)

    threading.Thread(target=announce, name="announce", daemon=True).start()
    try:
        server.run()
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
