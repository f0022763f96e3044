"""A rollback between two real releases (issue 55, item 3): release N-1 is the tree of
the commit before the newest migration was added (`git archive`), release N this checkout.
N's `geosvc migrate` builds a fresh PostgreSQL database, an account on the standard plan
with a key and three charged calls is put in it, then (a) N-1's code serves the newer
schema as it is (a code-only rollback) and (b) after N's `geosvc migrate --down-to`
N-1's head, N-1's code serves it as its own; the key and the plan survive both ways, and
N's `geosvc migrate` brings the schema forward again."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from app.kit.embedded_redis import free_port
from tests.deployment.test_releases import alembic_head, migration_chain
from tests.deployment.test_upgrade import PASSWORD, populate
from tests.support.factories import mcp_initialize
from tests.support.fixtures import Backend
from tests.support.live_server import service_env
from tests.support.services import postgres_database_or_skip
from tests.support.zygote import ChildProcess, run_command, start_command

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("backend", ["postgres"], indirect=True),
]


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def previous_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app/ of the commit before the one that added the newest migration."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no older release to build")
    head_file = next((ROOT / "app/migrations/versions").glob(f"{alembic_head()}*.py"))
    [added] = git(
        "log", "--diff-filter=A", "--format=%H", "--", str(head_file.relative_to(ROOT))
    ).splitlines()[-1:]
    tree = tmp_path_factory.mktemp("release-n-1")
    archive = tree / "app.tar"
    git("archive", "--format=tar", f"--output={archive}", f"{added}^", "app")
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


@pytest.fixture
def database() -> Iterator[str]:
    yield from postgres_database_or_skip()


def geosvc(env: dict[str, str], tree: Path, *args: str, ok: bool = True) -> str:
    """`geosvc` from a release's tree: this checkout's forked from the test zygote (which
    imported it), another's a new interpreter (`python -m` puts its directory first on
    sys.path)."""
    if tree == ROOT:
        forked = run_command(env, list(args), timeout=120)
        code, output = forked.returncode, forked.output
    else:
        result = subprocess.run(
            [sys.executable, "-m", "app.cli", *args],
            env=env,
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=120,
        )
        code, output = result.returncode, result.stdout + result.stderr
    assert (code == 0) == ok, output
    return " ".join(output.split())  # rich wraps its lines


def check_served(env: dict[str, str], tree: Path, log: Path, account: dict[str, str]) -> str:
    """Start `geosvc api --no-migrate` from `tree`, sign in, check the plan, the ledger and
    the key; stop it; the server's log."""
    port = free_port()
    argv = ["api", "--no-migrate", "--port", str(port)]
    api: ChildProcess
    if tree == ROOT:
        api = start_command(env, argv, log)
    else:
        with log.open("wb") as out:
            api = subprocess.Popen(
                [sys.executable, "-m", "app.cli", *argv],
                env=env,
                cwd=tree,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert api.poll() is None, log.read_text()
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=30) as http:
            signed_in = http.post(
                "/auth/signin", json={"email": account["email"], "password": PASSWORD}
            )
            assert signed_in.status_code == 200, signed_in.text
            assert http.get("/subscription").json()["plan"] == "standard"
            assert http.get("/usage").json()["used"] == 3
            [key] = http.get("/api-keys").json()["keys"]
            assert key["name"] == "from before the upgrade"
        assert mcp_initialize(url, account["key"]).status_code == 200
        assert mcp_initialize(url, account["key"] + "x").status_code in (401, 403)
    finally:
        api.terminate()
        api.wait(timeout=30)
    return log.read_text()


def test_the_previous_release_runs_on_the_new_schema_and_after_a_downgrade(
    backend: Backend, database: str, previous_release: Path, tmp_path: Path
) -> None:
    head = alembic_head()
    previous_head = migration_chain()[head]
    env = service_env(database_url=database, redis_url=backend.redis_url, data_dir=backend.data_dir)
    assert f"database at {head}" in geosvc(env, ROOT, "migrate")
    account = populate(database, env["GEOSVC_SECRET_PEPPER"])
    geosvc(env, ROOT, "admin", "set-plan", account["email"], "standard", "--reason", "rollback")

    # (a) N-1's code on N's schema: it says the schema is newer and serves it.
    shown = geosvc(env, previous_release, "migrate", "--show")
    assert f"this release's schema: {previous_head}" in shown  # the older code ran
    assert f"database at {head}, newer than this release knows" in shown
    log = check_served(env, previous_release, tmp_path / "n-1-newer.log", account)
    assert "newer than this release's" in log
    # N-1's own `geosvc migrate` fails there, as docs/DEPLOYMENT.md warns (not `migrate`).
    assert "Can't locate revision" in geosvc(env, previous_release, "migrate", ok=False)

    assert f"database at {head}" in geosvc(env, ROOT, "migrate")

    # (b) N's documented downgrade, then N-1's code serves its own schema.
    assert f"database at {previous_head}" in geosvc(
        env, ROOT, "migrate", "--down-to", previous_head
    )
    shown = geosvc(env, previous_release, "migrate", "--show")
    assert f"database at {previous_head} (this release's schema: {previous_head})" in shown
    log = check_served(env, previous_release, tmp_path / "n-1-own.log", account)
    assert "newer than this release's" not in log

    # And forward again with N: nothing lost.
    assert f"database at {head}" in geosvc(env, ROOT, "migrate")
    check_served(env, ROOT, tmp_path / "n.log", account)


def test_this_release_leaves_a_newer_schema_alone_and_refuses_to_undo_it(
    backend: Backend, database: str, tmp_path: Path
) -> None:
    """What N-1 lacked (its `geosvc migrate` failed with "Can't locate revision"): this
    release's `migrate` leaves a schema a newer release wrote as it is, and its
    `--down-to` names the command that can undo it."""
    env = service_env(database_url=database, redis_url=backend.redis_url, data_dir=backend.data_dir)
    geosvc(env, ROOT, "migrate")
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
    assert "database at 0099_from_the_future, newer than this release knows" in geosvc(
        env, ROOT, "migrate"
    )
    head = alembic_head()
    refused = geosvc(env, ROOT, "migrate", "--down-to", head, ok=False)
    assert f"run the newer release's `geosvc migrate --down-to {head}`" in refused
    assert "Can't locate revision" not in refused
