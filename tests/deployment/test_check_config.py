"""`geosvc check-config` lists every start-up refusal at once, and start-up itself still
refuses naming each (issue 38, items 4 and 5): real `geosvc` processes, forked from the
test zygote (tests/support/zygote.py; tests/test_production.py runs one refusal in a new
interpreter)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.deployment.checks import tls_problems
from app.kit.config import Settings
from tests.deployment.compose_env import ROOT, read_env_file
from tests.support.live_server import PRODUCTION_ENV
from tests.support.zygote import CommandResult, import_time_env, run_command

# What an empty environment lacks, every one named in one run.
EMPTY_ENVIRONMENT_REFUSES = (
    "GEOSVC_PAYMENT_PROVIDER",
    "GEOSVC_SECRET_PEPPER",
    "GEOSVC_OAUTH_SIGNING_KEY",
    "GEOSVC_REDIS_URL",
    "GEOSVC_DATABASE_URL",
    "GEOSVC_SMTP_URL",
    "GEOSVC_MAIL_FROM",
    "GEOSVC_STRIPE_SECRET_KEY",
    "GEOSVC_STRIPE_WEBHOOK_SECRET",
    "GEOSVC_STRIPE_STANDARD_PRICE",
    "GEOSVC_STRIPE_METER_EVENT",
    "GEOSVC_METRICS_TOKEN",
    "GEOSVC_FLOWER_AUTH",
)
COMPLETE = {
    **PRODUCTION_ENV,
    "GEOSVC_DATABASE_URL": "postgresql://geosvc:9f3c1d0a7b6e@postgres:5432/geosvc",
    "GEOSVC_REDIS_URL": "redis://:5e8a2c4b1d9f@redis:6379/0",
    "GEOSVC_BROKER_URL": "amqp://geosvc:0b7d3e9a1c5f@rabbitmq:5672/geosvc",
    "GEOSVC_FLOWER_AUTH": "ops:a-long-flower-password",
    "GEOSVC_FORWARDED_ALLOW_IPS": "172.28.0.10",
}


def geosvc(env: dict[str, str], *args: str, cwd: Path) -> CommandResult:
    """`geosvc` in an environment of `env` alone, besides what any process needs (and
    what Python reads at start-up, as the zygote that forks it did)."""
    bare = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    bare |= import_time_env()
    # cwd: no .env from the checkout
    return run_command({**bare, "COLUMNS": "200", **env}, list(args), cwd=cwd, timeout=60)


def listed(output: str) -> list[str]:
    return [line.strip()[2:] for line in output.splitlines() if line.strip().startswith("- ")]


def self_signed(directory: Path, days: int) -> Path:
    directory.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", str(days)]
        + ["-subj", "/CN=localhost", "-keyout", str(directory / "privkey.pem")]
        + ["-out", str(directory / "fullchain.pem")],
        check=True,
        capture_output=True,
    )
    return directory


class TestCheckConfig:
    def test_an_empty_environment_gets_every_refusal_in_one_run(self, tmp_path: Path) -> None:
        result = geosvc({}, "check-config", cwd=tmp_path)
        assert result.returncode == 2, result.output
        problems = listed(result.output)
        for setting in EMPTY_ENVIRONMENT_REFUSES:
            assert any(setting in problem for problem in problems), (setting, result.output)
        assert len(problems) == len(EMPTY_ENVIRONMENT_REFUSES)
        assert "Traceback" not in result.output

    def test_a_complete_environment_passes(self, tmp_path: Path) -> None:
        tls = self_signed(tmp_path / "tls", days=90)
        result = geosvc(COMPLETE, "check-config", "--tls-dir", str(tls), cwd=tmp_path)
        assert result.returncode == 0, result.output
        assert "every process would start" in result.output

    def test_a_bad_field_and_the_production_rules_are_reported_together(
        self, tmp_path: Path
    ) -> None:
        env = {**COMPLETE, "GEOSVC_SMTP_URL": "http://mail.example.com", "GEOSVC_FREE_QUOTA": "0"}
        del env["GEOSVC_METRICS_TOKEN"]
        env["GEOSVC_SECRET_PEPPER"] = "short"
        result = geosvc(env, "check-config", cwd=tmp_path)
        assert result.returncode == 2
        problems = " ".join(listed(result.output))
        for setting in (
            "GEOSVC_SMTP_URL",
            "GEOSVC_FREE_QUOTA",
            "GEOSVC_SECRET_PEPPER",
            "GEOSVC_METRICS_TOKEN",
        ):
            assert setting in problems, (setting, result.output)
        assert "mail.example.com" not in result.output  # the URL may hold a password

    def test_as_set_judges_development_as_development(self, tmp_path: Path) -> None:
        result = geosvc({}, "check-config", "--as-set", cwd=tmp_path)
        assert result.returncode == 0, result.output

    def test_no_secret_is_printed(self, tmp_path: Path) -> None:
        env = {**COMPLETE, "GEOSVC_SECRET_PEPPER": "s3cret-but-short"}
        result = geosvc(env, "check-config", cwd=tmp_path)
        assert result.returncode == 2
        for secret in ("s3cret-but-short", "5e8a2c4b1d9f", "a-long-flower-password"):
            assert secret not in result.output


class TestStartUpNamesEveryRefusal:
    def test_every_problem_is_named_not_only_the_first(self, tmp_path: Path) -> None:
        # secrets the billing pool reads (a migration reads the database URL alone:
        # app/kit/production.py, SECRETS_READ_BY), and a setting every process needs
        env = {**COMPLETE, "GEOSVC_STRIPE_SECRET_KEY": "", "GEOSVC_SMTP_URL": ""}
        del env["GEOSVC_STRIPE_METER_EVENT"]
        result = geosvc(env, "worker", "--queues", "billing", cwd=tmp_path)
        assert result.returncode == 2
        output = " ".join(result.output.split())
        assert "refusing to start" in output
        for setting in (
            "GEOSVC_STRIPE_SECRET_KEY",
            "GEOSVC_SMTP_URL",
            "GEOSVC_STRIPE_METER_EVENT",
        ):
            assert setting in output, (setting, output)


class TestDefaultCredentialsAreRefused:
    @pytest.mark.parametrize(
        ("setting", "url"),
        [
            ("GEOSVC_DATABASE_URL", "postgresql://geosvc:geosvc@postgres:5432/geosvc"),
            ("GEOSVC_BROKER_URL", "amqp://guest:guest@rabbitmq:5672/"),
            ("GEOSVC_REDIS_URL", "redis://redis:6379/0"),  # no password, not loopback
            ("GEOSVC_REDIS_URL", "redis://:Password@redis:6379/0"),
        ],
    )
    def test_refused_in_production(self, tmp_path: Path, setting: str, url: str) -> None:
        result = geosvc({**COMPLETE, setting: url}, "check-config", cwd=tmp_path)
        assert result.returncode == 2
        [problem] = listed(result.output)
        assert setting in problem

    def test_a_loopback_redis_without_password_is_accepted(self, tmp_path: Path) -> None:
        env = {**COMPLETE, "GEOSVC_REDIS_URL": "redis://127.0.0.1:6379/0"}
        assert geosvc(env, "check-config", cwd=tmp_path).returncode == 0


# Every file the repository ships for an operator to copy and fill in.
EXAMPLE_FILES = sorted(
    {ROOT / ".env.example", *ROOT.glob("deploy/**/*.env.example"), *ROOT.glob("deploy/**/*.env")}
)
SECRET_NAME_ENDINGS = ("PASSWORD", "TOKEN", "KEY", "SECRET", "AUTH", "PEPPER", "PREVIOUS")
PLACEHOLDER_WORDS = ("REPLACE", "CHANGE-ME", "CHANGEME", "CHANGE_ME", "PLACEHOLDER")


def is_secret_like(name: str, value: str) -> bool:
    """A secret by its setting's type or name, or a URL that carries a password."""
    field = Settings.model_fields.get(name.removeprefix("GEOSVC_").lower())
    secret_type = field is not None and "SecretStr" in str(field.annotation)
    has_password = "://" in value and "@" in value.split("://", 1)[1].split("/", 1)[0]
    return secret_type or name.endswith(SECRET_NAME_ENDINGS) or has_password


def shipped_values(path: Path) -> dict[str, str]:
    """The values of `path` that production must refuse: every secret-like one it fills
    in, and any value that says it is a placeholder."""
    return {
        name: value
        for name, value in read_env_file(path).items()
        if value
        and (is_secret_like(name, value) or any(w in value.upper() for w in PLACEHOLDER_WORDS))
    }


class TestPlaceholdersAreRefused:
    """Issue 51, item 5: a value left as an example file ships it is a publicly known
    secret; production names each such setting (and never prints the value)."""

    def test_the_example_files_are_found(self) -> None:
        names = {path.relative_to(ROOT).as_posix() for path in EXAMPLE_FILES}
        assert {".env.example", "deploy/kubernetes/secrets.env.example"} <= names
        secrets_example = ROOT / "deploy/kubernetes/secrets.env.example"
        assert len(shipped_values(secrets_example)) >= 10

    @pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
    def test_every_shipped_secret_is_refused_naming_its_setting(
        self, tmp_path: Path, path: Path
    ) -> None:
        shipped = shipped_values(path)
        settings = {name: value for name, value in shipped.items() if name.startswith("GEOSVC_")}
        # compose's own passwords go into the URLs: an example file leaves them empty
        assert settings.keys() == shipped.keys(), "a non-GEOSVC secret with a value"
        if not settings:
            return
        result = geosvc({**COMPLETE, **settings}, "check-config", cwd=tmp_path)
        assert result.returncode == 2, result.output
        problems = listed(result.output)
        for name in settings:
            named = [p for p in problems if name in p]
            assert any("placeholder" in p or "guess" in p for p in named), (name, problems)
        for value in settings.values():
            secret = value.rsplit("@", 1)[0].rsplit(":", 1)[-1]
            assert secret not in result.output

    @pytest.mark.parametrize(
        ("setting", "value"),
        [
            ("GEOSVC_SECRET_PEPPER", "0" * 64),  # all-zero hex
            ("GEOSVC_OAUTH_SIGNING_KEY", "ab" * 20),
            ("GEOSVC_METRICS_TOKEN", "CHANGE-ME"),
            ("GEOSVC_FLOWER_AUTH", "ops:changeme"),
            ("GEOSVC_DATABASE_URL", "postgresql://geosvc:change_me_now@postgres:5432/geosvc"),
            ("GEOSVC_REDIS_URL", "redis://:00000000@redis:6379/0"),
            ("GEOSVC_STRIPE_SECRET_KEY", "sk_live_REPLACE_ME"),
            ("GEOSVC_STRIPE_STANDARD_PRICE", "price_REPLACE_WITH_THE_PRICE_ID"),
            ("GEOSVC_SECRET_PEPPER_PREVIOUS", "x" * 40),
            ("GEOSVC_BASE_URL", "http://geo.example.com"),
            ("GEOSVC_BASE_URL", "HTTP://10.0.0.5:8000"),
        ],
    )
    def test_well_known_values_are_refused(self, tmp_path: Path, setting: str, value: str) -> None:
        result = geosvc({**COMPLETE, setting: value}, "check-config", cwd=tmp_path)
        assert result.returncode == 2, result.output
        [problem] = listed(result.output)
        assert setting in problem

    @pytest.mark.parametrize(
        "base_url", ["https://geo.example.com", "http://127.0.0.1:8000", "http://localhost"]
    )
    def test_https_or_loopback_base_urls_pass(self, tmp_path: Path, base_url: str) -> None:
        env = {**COMPLETE, "GEOSVC_BASE_URL": base_url}
        assert geosvc(env, "check-config", cwd=tmp_path).returncode == 0


class TestCertificate:
    def test_missing_files_are_named(self, tmp_path: Path) -> None:
        problems = tls_problems(tmp_path)
        assert len(problems) == 2
        assert "fullchain.pem" in problems[0]
        assert "privkey.pem" in problems[1]

    def test_one_ending_within_two_weeks_is_reported(self, tmp_path: Path) -> None:
        tls = self_signed(tmp_path / "tls", days=30)
        assert tls_problems(tls) == []
        [problem] = tls_problems(tls, now=datetime.now(UTC) + timedelta(days=20))
        assert "renew" in problem

    def test_a_file_that_is_no_certificate(self, tmp_path: Path) -> None:
        (tmp_path / "fullchain.pem").write_text("not a certificate")
        (tmp_path / "privkey.pem").write_text("")
        [problem] = tls_problems(tmp_path)
        assert "not a PEM certificate" in problem
