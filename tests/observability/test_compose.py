"""docker-compose's Prometheus scrapes what the processes serve, with the token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


@pytest.fixture(scope="module")
def prometheus() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "prometheus.yml").read_text()))


def test_prometheus_scrapes_every_api_and_worker_with_the_token(
    compose: dict[str, Any], prometheus: dict[str, Any]
) -> None:
    services = compose["services"]
    jobs = {job["job_name"]: job for job in prometheus["scrape_configs"]}
    assert set(jobs) == {"geosvc-api", "geosvc-worker", "geosvc-tls", "node"}
    # the database volume's free space (issue 55): node-exporter sees the postgres volume
    [node] = jobs["node"]["static_configs"]
    assert node["targets"] == ["node-exporter:9100"]
    assert "postgres:/pgdata:ro" in services["node-exporter"]["volumes"]
    assert services["postgres"]["volumes"] == ["postgres:/var/lib/postgresql/data"]
    api_command = services["api"]["command"]  # not published: the port it listens on
    api_port = int(api_command[api_command.index("--port") + 1])
    worker_port = int(services["worker"]["environment"]["GEOSVC_WORKER_METRICS_PORT"])
    for job, names, port in (
        (jobs["geosvc-api"], ["api"], api_port),
        (jobs["geosvc-worker"], ["worker", "worker-bulk", "worker-jobs"], worker_port),
    ):
        assert job["metrics_path"] == "/metrics"
        [discovery] = job["dns_sd_configs"]  # every replica, so --scale is scraped too
        assert discovery == {"names": names, "type": "A", "port": port}
        assert all(name in services for name in names)
        assert job["authorization"] == {"credentials_file": "/run/secrets/metrics_token"}
    prometheus_service = services["prometheus"]
    assert prometheus_service["secrets"] == ["metrics_token"]
    assert compose["secrets"]["metrics_token"] == {"environment": "GEOSVC_METRICS_TOKEN"}
    assert "./prometheus.yml:/etc/prometheus/prometheus.yml:ro" in prometheus_service["volumes"]


def test_every_geosvc_process_has_the_metrics_token(compose: dict[str, Any]) -> None:
    for name in ("api", "worker", "worker-bulk", "worker-jobs", "beat"):
        env = compose["services"][name]["environment"]
        assert env["GEOSVC_METRICS_TOKEN"].startswith("${GEOSVC_METRICS_TOKEN:?")
