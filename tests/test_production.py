"""Start-up refusals with GEOSVC_ENV=production, and Flower behind a password (issue 10,
items 1 and 2): real `geosvc` processes, real Redis.

Each `geosvc` is forked from the test zygote (tests/support/zygote.py: `app.cli.main` on
the command line, in a process of its own, its exit status and output read back), where a
new interpreter per refusal spent 2-3 s of CPU importing the app; one refusal runs in a
new interpreter, `python -m app.cli` as an operator starts it, to prove that wiring."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.kit.embedded_redis import free_port
from tests.support.fixtures import Backend
from tests.support.live_server import PRODUCTION_ENV
from tests.support.zygote import ChildProcess, CommandResult, run_command, start_command

LONG_PEPPER = PRODUCTION_ENV["GEOSVC_SECRET_PEPPER"]


def run_geosvc(env: dict[str, str], *args: str) -> CommandResult:
    return run_command(env, list(args), timeout=60)


def words(result: CommandResult) -> str:
    return " ".join(result.output.split())  # rich wraps its lines


@pytest.fixture
def production_env(backend: Backend) -> dict[str, str]:
    return backend.env(**PRODUCTION_ENV)


class TestProductionRefusals:
    @pytest.mark.parametrize(
        ("override", "setting"),
        [
            ({"GEOSVC_PAYMENT_PROVIDER": "local"}, "GEOSVC_PAYMENT_PROVIDER"),
            ({"GEOSVC_SECRET_PEPPER": ""}, "GEOSVC_SECRET_PEPPER"),
            ({"GEOSVC_SECRET_PEPPER": LONG_PEPPER[:31]}, "GEOSVC_SECRET_PEPPER"),
            # no embedded Redis or SQLite: quotas and limits would be per process
            ({"GEOSVC_REDIS_URL": ""}, "GEOSVC_REDIS_URL"),
            ({"GEOSVC_DATABASE_URL": ""}, "GEOSVC_DATABASE_URL"),
            # a lease that ends before its call would hand its slot and credit on
            ({"GEOSVC_RESERVATION_TTL_S": "30"}, "GEOSVC_RESERVATION_TTL_S"),
            # every client could pick its own address and escape the sign-in limits
            ({"GEOSVC_FORWARDED_ALLOW_IPS": "*"}, "GEOSVC_FORWARDED_ALLOW_IPS"),
            ({"GEOSVC_FORWARDED_ALLOW_IPS": "10.0.0.2, *"}, "GEOSVC_FORWARDED_ALLOW_IPS"),
            # OAuth tokens are hashed and the consent form signed with it
            ({"GEOSVC_OAUTH_SIGNING_KEY": ""}, "GEOSVC_OAUTH_SIGNING_KEY"),
            ({"GEOSVC_OAUTH_SIGNING_KEY": "too-short"}, "GEOSVC_OAUTH_SIGNING_KEY"),
            # any client could make the service fetch addresses on its own network
            ({"GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK": "true"}, "GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK"),
            # mail would only be written to the log: nobody could confirm an address
            # (the billing pool sends it; a missing GEOSVC_SMTP_URL: test below)
            ({"GEOSVC_MAIL_FROM": ""}, "GEOSVC_MAIL_FROM"),
            ({"GEOSVC_SMTP_URL": "http://mail.example.com"}, "GEOSVC_SMTP_URL"),
        ],
    )
    def test_api_refuses_to_start_naming_the_setting(
        self, production_env: dict[str, str], override: dict[str, str], setting: str
    ) -> None:
        port = free_port()
        result = run_geosvc({**production_env, **override}, "api", "--port", str(port))
        assert result.returncode == 2, result.output
        output = words(result)
        assert "refusing to start" in output
        assert setting in output
        assert "Traceback" not in output
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)

    @pytest.mark.parametrize(
        ("command", "missing"),
        [
            (["worker", "--queues", "billing"], "GEOSVC_SMTP_URL"),
            (["worker", "--queues", "billing"], "GEOSVC_STRIPE_SECRET_KEY"),
            (["flower"], "GEOSVC_REDIS_URL"),
            (["migrate"], "GEOSVC_DATABASE_URL"),
            # not a secret: every process still needs it
            (["migrate"], "GEOSVC_STRIPE_METER_EVENT"),
        ],
    )
    def test_a_process_refuses_without_a_secret_it_reads(
        self, production_env: dict[str, str], command: list[str], missing: str
    ) -> None:
        """Issue 51, item 6: each process asks for the secrets it reads
        (app/kit/production.py, SECRETS_READ_BY), and names the one it lacks."""
        result = run_geosvc({**production_env, missing: ""}, *command)
        assert result.returncode == 2, result.output
        output = words(result)
        assert "refusing to start" in output
        assert missing in output

    def test_a_process_starts_without_the_secrets_it_does_not_read(
        self, production_env: dict[str, str]
    ) -> None:
        """The migration reads the database URL alone: Kubernetes gives it nothing else
        (deploy/kubernetes/base/migrate/job.yaml). A secret given must still be safe."""
        unread = ["GEOSVC_SECRET_PEPPER", "GEOSVC_OAUTH_SIGNING_KEY", "GEOSVC_STRIPE_SECRET_KEY"]
        unread += ["GEOSVC_STRIPE_WEBHOOK_SECRET", "GEOSVC_SMTP_URL", "GEOSVC_REDIS_URL"]
        env = {k: v for k, v in production_env.items() if k not in unread}
        result = run_geosvc(env, "migrate")
        assert result.returncode == 0, result.output
        short = run_geosvc({**env, "GEOSVC_SECRET_PEPPER": LONG_PEPPER[:31]}, "migrate")
        assert short.returncode == 2, short.output
        assert "GEOSVC_SECRET_PEPPER" in short.output

    def test_the_same_settings_are_fine_in_development(self, backend: Backend) -> None:
        env = backend.env(GEOSVC_PAYMENT_PROVIDER="local", GEOSVC_SECRET_PEPPER="short")
        assert run_geosvc(env, "migrate").returncode == 0

    def test_a_safe_production_configuration_starts(self, production_env: dict[str, str]) -> None:
        result = run_geosvc(production_env, "migrate")
        assert result.returncode == 0, result.output

    def test_a_new_interpreter_refuses_as_the_forked_ones_do(
        self, production_env: dict[str, str]
    ) -> None:
        """`python -m app.cli` imports nothing before the command reads its settings;
        the forked commands above share one import of the app."""
        port = free_port()
        env = {**production_env, "GEOSVC_SECRET_PEPPER": LONG_PEPPER[:31]}
        result = subprocess.run(
            [sys.executable, "-m", "app.cli", "api", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stdout + result.stderr
        output = " ".join((result.stdout + result.stderr).split())
        assert "refusing to start" in output
        assert "GEOSVC_SECRET_PEPPER" in output
        assert "Traceback" not in output


def wait_for_http(url: str, process: ChildProcess, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"flower exited:\n{log.read_text(errors='replace')}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"flower did not answer:\n{log.read_text(errors='replace')}")


@pytest.fixture
def flower_with_password(backend: Backend, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "flower.log"
    env = backend.env(GEOSVC_FLOWER_AUTH="ops:correct-horse")
    process = start_command(env, ["flower", "--port", str(port)], log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert "correct-horse" not in log.read_text(errors="replace")


class TestFlower:
    def test_production_refuses_flower_without_a_password(
        self, production_env: dict[str, str]
    ) -> None:
        result = run_geosvc(production_env, "flower", "--port", str(free_port()))
        assert result.returncode == 2, result.output
        assert "GEOSVC_FLOWER_AUTH" in words(result)

    def test_flower_asks_for_the_password(self, flower_with_password: str) -> None:
        assert httpx.get(flower_with_password, timeout=5).status_code == 401
        wrong = httpx.get(flower_with_password, auth=("ops", "wrong"), timeout=5)
        assert wrong.status_code == 401
        right = httpx.get(flower_with_password, auth=("ops", "correct-horse"), timeout=5)
        assert right.status_code == 200

    def test_workers_send_task_events_so_flower_shows_tasks(self) -> None:
        from app.kit.config import get_settings
        from app.queue.celery import celery_config

        assert celery_config(get_settings())["worker_send_task_events"] is True
