"""`geosvc check-config` lists every start-up refusal at once, and start-up itself still
refuses naming each (issue 38, items 4 and 5): real `geosvc` processes."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.deployment.checks import tls_problems
from tests.support.live_server import PRODUCTION_ENV

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


def geosvc(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    bare = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env={**bare, "COLUMNS": "200", **env},
        cwd=cwd,  # no .env from the checkout
        capture_output=True,
        text=True,
        timeout=60,
    )


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
        assert result.returncode == 2, result.stdout + result.stderr
        problems = listed(result.stdout)
        for setting in EMPTY_ENVIRONMENT_REFUSES:
            assert any(setting in problem for problem in problems), (setting, result.stdout)
        assert len(problems) == len(EMPTY_ENVIRONMENT_REFUSES)
        assert "Traceback" not in result.stdout + result.stderr

    def test_a_complete_environment_passes(self, tmp_path: Path) -> None:
        tls = self_signed(tmp_path / "tls", days=90)
        result = geosvc(COMPLETE, "check-config", "--tls-dir", str(tls), cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "every process would start" in result.stdout

    def test_a_bad_field_and_the_production_rules_are_reported_together(
        self, tmp_path: Path
    ) -> None:
        env = {**COMPLETE, "GEOSVC_SMTP_URL": "http://mail.example.com", "GEOSVC_FREE_QUOTA": "0"}
        del env["GEOSVC_METRICS_TOKEN"]
        env["GEOSVC_SECRET_PEPPER"] = "short"
        result = geosvc(env, "check-config", cwd=tmp_path)
        assert result.returncode == 2
        problems = " ".join(listed(result.stdout))
        for setting in (
            "GEOSVC_SMTP_URL",
            "GEOSVC_FREE_QUOTA",
            "GEOSVC_SECRET_PEPPER",
            "GEOSVC_METRICS_TOKEN",
        ):
            assert setting in problems, (setting, result.stdout)
        assert "mail.example.com" not in result.stdout  # the URL may hold a password

    def test_as_set_judges_development_as_development(self, tmp_path: Path) -> None:
        result = geosvc({}, "check-config", "--as-set", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr

    def test_no_secret_is_printed(self, tmp_path: Path) -> None:
        env = {**COMPLETE, "GEOSVC_SECRET_PEPPER": "s3cret-but-short"}
        result = geosvc(env, "check-config", cwd=tmp_path)
        assert result.returncode == 2
        for secret in ("s3cret-but-short", "5e8a2c4b1d9f", "a-long-flower-password"):
            assert secret not in result.stdout + result.stderr


class TestStartUpNamesEveryRefusal:
    def test_every_problem_is_named_not_only_the_first(self, tmp_path: Path) -> None:
        env = {**COMPLETE, "GEOSVC_SECRET_PEPPER": "", "GEOSVC_SMTP_URL": ""}
        del env["GEOSVC_STRIPE_METER_EVENT"]
        result = geosvc(env, "migrate", cwd=tmp_path)
        assert result.returncode == 2
        output = " ".join(result.stdout.split())
        assert "refusing to start" in output
        for setting in ("GEOSVC_SECRET_PEPPER", "GEOSVC_SMTP_URL", "GEOSVC_STRIPE_METER_EVENT"):
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
        [problem] = listed(result.stdout)
        assert setting in problem

    def test_a_loopback_redis_without_password_is_accepted(self, tmp_path: Path) -> None:
        env = {**COMPLETE, "GEOSVC_REDIS_URL": "redis://127.0.0.1:6379/0"}
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
