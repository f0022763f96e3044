"""Start-up rules: production refuses unprotected metrics; tracing costs nothing unless
asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.live_server import PRODUCTION_ENV, service_env


@pytest.fixture
def production_env(tmp_path: Path, redis_url: str) -> dict[str, str]:
    env = service_env(
        database_url=f"sqlite:///{tmp_path / 'db.sqlite'}",
        redis_url=redis_url,
        data_dir=tmp_path,
        **PRODUCTION_ENV,
    )
    env.pop("GEOSVC_METRICS_TOKEN")
    return env


@pytest.mark.parametrize(
    "command", [["api", "--port", "1"], ["worker", "--queues", "billing"]], ids=["api", "worker"]
)
def test_production_without_a_metrics_token_refuses_to_start(
    production_env: dict[str, str], command: list[str]
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", *command],
        env=production_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "GEOSVC_METRICS_TOKEN must be set in production" in result.stderr


def test_the_app_refuses_too(production_env: dict[str, str]) -> None:
    """A bare `uvicorn app.main:create_app` (no geosvc api) in production."""
    code = "from app.main import create_app; create_app()"
    result = subprocess.run(
        [sys.executable, "-c", code], env=production_env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "GEOSVC_METRICS_TOKEN" in result.stderr


def test_without_an_otlp_endpoint_no_opentelemetry_sdk_is_loaded(
    production_env: dict[str, str],
) -> None:
    env = {**production_env, "GEOSVC_ENV": "development"}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    # (the MCP SDK imports the OpenTelemetry API and redis-py the SDK's metrics when
    # installed; neither exports anything without a provider and an exporter)
    ours = ("opentelemetry.exporter", "opentelemetry.instrumentation")
    code = (
        f"OURS = {ours!r}; "
        "import sys; from app.main import create_app; create_app(); "
        "from opentelemetry import trace; "
        "print(type(trace.get_tracer_provider()).__name__, "
        "sorted(m for m in sys.modules if m.startswith(OURS)))"
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ProxyTracerProvider []"
