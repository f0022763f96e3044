""".env.example covers every setting production requires, and with its empty values
filled in, the containers docker-compose.yml renders from it would all start
(issue 38, items 4 and 5)."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deployment.compose_env import (
    ROOT,
    MissingVariable,
    compose_file,
    read_env_file,
    rendered_compose,
    required_variables,
)
from tests.deployment.test_check_config import EMPTY_ENVIRONMENT_REFUSES, listed

APP_SERVICES = ("migrate", "api", "worker", "worker-bulk", "worker-jobs", "beat", "flower")
# Values an operator types in (the rest are random secrets).
TYPED = {
    "GEOSVC_IMAGE_TAG": "0.1.0-abc1234",
    "GEOSVC_FLOWER_AUTH": "ops:" + secrets.token_hex(12),
    "GEOSVC_STRIPE_SECRET_KEY": "sk_live_" + secrets.token_hex(8),
    "GEOSVC_STRIPE_WEBHOOK_SECRET": "whsec_" + secrets.token_hex(8),
    "GEOSVC_STRIPE_STANDARD_PRICE": "price_standard",
    "GEOSVC_STRIPE_METER_EVENT": "geosvc_overage",
    "GEOSVC_SMTP_URL": "smtp://mailer:" + secrets.token_hex(8) + "@smtp.example.com:587",
    "GEOSVC_MAIL_FROM": "Geospatial Data Service <no-reply@example.com>",
}
OPTIONAL = {
    "GEOSVC_STRIPE_OVERAGE_PRICE",
    "GEOSVC_SECRET_PEPPER_PREVIOUS",
    "GEOSVC_METRICS_PREVIOUS_TOKEN",
}


@pytest.fixture(scope="module")
def example() -> dict[str, str]:
    return read_env_file(ROOT / ".env.example")


def filled(example: dict[str, str]) -> dict[str, str]:
    return {
        name: value or TYPED.get(name, "" if name in OPTIONAL else secrets.token_hex(32))
        for name, value in example.items()
    }


def test_it_names_every_variable_compose_requires(example: dict[str, str]) -> None:
    assert required_variables(compose_file()) - set(example) == set()


def test_every_setting_production_requires_is_in_it_or_set_by_compose(
    example: dict[str, str],
) -> None:
    services = rendered_compose(filled(example))["services"]
    for setting in EMPTY_ENVIRONMENT_REFUSES:
        in_compose = any(setting in services[name]["environment"] for name in APP_SERVICES)
        assert setting in example or in_compose, setting


def test_compose_refuses_to_render_without_a_password(example: dict[str, str]) -> None:
    for name in ("POSTGRES_PASSWORD", "RABBITMQ_PASSWORD", "REDIS_PASSWORD"):
        with pytest.raises(MissingVariable):
            rendered_compose({**filled(example), name: ""})


@pytest.mark.parametrize("service", APP_SERVICES)
def test_every_app_container_would_start(
    example: dict[str, str], service: str, tmp_path: Path
) -> None:
    rendered = rendered_compose(filled(example))["services"][service]["environment"]
    # an empty `${VAR:-}` is YAML's null; compose hands the container an empty string
    env = {key: "" if value is None else str(value) for key, value in rendered.items()}
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "check-config", "--as-set"],
        env={"PATH": "/usr/bin:/bin", **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    problems = listed(result.stdout)
    # Only Flower gets (and needs) GEOSVC_FLOWER_AUTH.
    expected = [] if service == "flower" else ["GEOSVC_FLOWER_AUTH"]
    assert [problem.split()[0] for problem in problems] == expected, result.stdout


def test_the_database_and_broker_passwords_come_from_it(example: dict[str, str]) -> None:
    values = filled(example)
    services = rendered_compose(values)["services"]
    env = services["api"]["environment"]
    assert f":{values['POSTGRES_PASSWORD']}@postgres:" in env["GEOSVC_DATABASE_URL"]
    assert f":{values['RABBITMQ_PASSWORD']}@rabbitmq:" in env["GEOSVC_BROKER_URL"]
    assert f":{values['REDIS_PASSWORD']}@redis:" in env["GEOSVC_REDIS_URL"]
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == values["POSTGRES_PASSWORD"]
    assert (
        services["rabbitmq"]["environment"]["RABBITMQ_DEFAULT_PASS"] == values["RABBITMQ_PASSWORD"]
    )
    assert services["redis"]["environment"]["REDISCLI_AUTH"] == values["REDIS_PASSWORD"]
    config = rendered_compose(values)["configs"]["redis-password"]["content"]
    assert config.strip() == f"requirepass {values['REDIS_PASSWORD']}"
    assert "geosvc:geosvc" not in compose_file()
