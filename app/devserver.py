"""`geosvc dev`: everything in one process on the embedded default.

Migrates the SQLite database, builds or loads the geodata indices, makes a demo account
with a fresh API key, starts `geosvc worker` (thread pool) and `geosvc beat` as child
processes on the embedded Redis, then serves the api: one command, the production code
path. (A Celery worker started in a thread of the api process gets a DisabledBackend in
its pool threads and stores no results, so the worker gets a process of its own.)
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from dataclasses import dataclass

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
    return [
        subprocess.Popen(
            [*worker, "--loglevel", "warning", "--hostname", "dev@%h"], preexec_fn=die_with_parent
        ),
        subprocess.Popen(beat, preexec_fn=die_with_parent),
    ]


def serve(*, host: str, port: int, console: Console) -> None:
    import uvicorn

    from app.db import migrate, new_session
    from app.geodata import service as geodata
    from app.main import create_app

    migrate()
    with console.status("Loading the geodata indices (built on the first run)"):
        geodata.warm_up()
    with new_session() as session:
        demo = demo_account(session)
        session.commit()
    children = start_worker_and_beat()
    base = f"http://{host}:{port}"
    for line in (
        f"[bold]Dashboard[/]  {base}/   (demo sign-in: {demo.email} / {demo.password})",
        f"[bold]MCP URL[/]    {base}/mcp",
        f"[bold]Demo key[/]   {demo.api_key}",
        f"             send it as  Authorization: Bearer {demo.api_key}",
    ):
        console.print(line, soft_wrap=True)
    try:
        uvicorn.run(create_app(), host=host, port=port, log_level="info")
    finally:
        for child in children:
            child.terminate()
