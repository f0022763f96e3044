"""docker-compose.yml is valid YAML and every process command is one the CLI accepts."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs
from typer.testing import CliRunner

from app.cli import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


def test_has_the_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {
        "migrate",
        "redis",
        "rabbitmq",
        "postgres",
        "api",
        "worker",
        "worker-bulk",
        "worker-jobs",
        "beat",
        "flower",
        "prometheus",
        "alertmanager",
        "node-exporter",
        "backup",
        "proxy",
        "blackbox",
    }


@pytest.mark.parametrize("name", ["worker", "worker-bulk", "worker-jobs"])
def test_workers_are_restarted_when_they_stop_consuming(compose: dict[str, Any], name: str) -> None:
    worker = compose["services"][name]
    assert worker["restart"] == "unless-stopped"
    probe = worker["healthcheck"]["test"]
    assert probe[:3] == ["CMD", "geosvc", "worker-health"]
    result = CliRunner().invoke(cli, [*probe[2:], "--help"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name", ["worker", "worker-bulk", "worker-jobs"])
def test_workers_read_the_indices_built_into_the_image(compose: dict[str, Any], name: str) -> None:
    """Issue 55, item 4: a worker refuses to start without its indices; the image has them
    (the Dockerfile builds them where the workers' GEOSVC_DATA_DIR points), so no service
    builds them at start and a scaled-up worker consumes within seconds."""
    data_dir = compose["services"][name]["environment"]["GEOSVC_DATA_DIR"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f"RUN geosvc data build --data-dir {data_dir}\n" in dockerfile
    assert data_dir not in {v.split(":")[1] for v in compose["services"][name]["volumes"]}
    assert "geodata-build" not in compose["services"][name]["depends_on"]
    # the rest of the shared environment is kept (the merge, not a replacement)
    assert compose["services"][name]["environment"]["GEOSVC_ENV"] == "production"


def test_backups_run_on_a_schedule_with_retention(compose: dict[str, Any]) -> None:
    """Issue 55, item 1: `geosvc admin backup --dir` in a loop into a volume of its own."""
    backup = compose["services"]["backup"]
    script = backup["command"][0]
    assert backup["entrypoint"] == ["/bin/sh", "-c"]
    assert "geosvc admin backup --dir /backups --keep-days" in script
    assert "backups:/backups" in backup["volumes"]
    assert "backups" in compose["volumes"]
    argv = ["admin", "backup", "--dir", "/backups", "--keep-days", "30", "--help"]
    assert CliRunner().invoke(cli, argv).exit_code == 0
    subprocess.run(["sh", "-n", "-c", script.replace("$$", "$")], check=True)


def test_paying_calls_have_a_worker_pool_of_their_own(compose: dict[str, Any]) -> None:
    """Tenant isolation: `tools` on one pool, free and heavy calls and billing on the
    (niced) bulk pool, jobs' chunks on a pool of their own."""
    queues = {
        name: compose["services"][name]["command"][-1].split(",")
        for name in ("worker", "worker-bulk", "worker-jobs")
    }
    assert queues["worker"] == ["tools"]
    assert set(queues["worker-bulk"]) == {"tools.free", "tools.heavy", "billing"}
    assert queues["worker-jobs"] == ["jobs"]


def test_jobs_take_only_the_cpu_nothing_else_wants(compose: dict[str, Any]) -> None:
    """Issue 59, item 6: niceness and SCHED_IDLE count only inside a container's own
    cgroup, so the jobs container has the lowest CPU weight between containers (Docker's
    cpu_shares 2 is cgroup v2's cpu.weight 1; a container without it has 100)."""
    services = compose["services"]
    assert services["worker-jobs"]["cpu_shares"] == 2
    assert all("cpu_shares" not in services[name] for name in ("api", "worker"))


def test_redis_keeps_an_aof_and_rabbitmq_is_the_broker(compose: dict[str, Any]) -> None:
    redis_command = compose["services"]["redis"]["command"]
    assert redis_command[redis_command.index("--appendonly") + 1] == "yes"
    assert redis_command[redis_command.index("--appendfsync") + 1] == "everysec"
    env = compose["services"]["worker"]["environment"]
    assert env["GEOSVC_BROKER_URL"].startswith("amqp://")


@pytest.mark.parametrize("service", ["api", "worker", "beat", "migrate"])
def test_geosvc_commands_parse(compose: dict[str, Any], service: str) -> None:
    command = compose["services"][service]["command"]
    assert command[:2] == ["geosvc", service]
    # --help is handled after parsing: an unknown option or bad value still fails first
    result = CliRunner().invoke(cli, [*command[1:], "--help"])
    assert result.exit_code == 0, result.output
    bad = CliRunner().invoke(cli, [*command[1:], "--no-such-option", "--help"])
    assert bad.exit_code != 0


def test_app_services_share_the_configuration(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("api", "worker", "beat", "flower"):
        env = services[name]["environment"]
        assert env["GEOSVC_DATABASE_URL"].startswith("postgresql://")
        assert env["GEOSVC_REDIS_URL"].startswith("redis://:${REDIS_PASSWORD:?")
        assert env["GEOSVC_ENV"] == "production"
        assert "GEOSVC_SECRET_PEPPER" in env
        assert "GEOSVC_OAUTH_SIGNING_KEY" in env
    assert "GEOSVC_FLOWER_AUTH" in services["flower"]["environment"]
    assert "GEOSVC_FLOWER_AUTH" not in services["api"]["environment"]
    assert (ROOT / "Dockerfile").exists()


def test_production_compose_is_accepted_by_settings(compose: dict[str, Any]) -> None:
    env = compose["services"]["api"]["environment"]
    assert env["GEOSVC_PAYMENT_PROVIDER"] != "local"


def test_flower_runs_through_geosvc_and_is_not_published_on_all_interfaces(
    compose: dict[str, Any],
) -> None:
    flower = compose["services"]["flower"]
    assert flower["command"][:2] == ["geosvc", "flower"]
    result = CliRunner().invoke(cli, [*flower["command"][1:], "--help"])
    assert result.exit_code == 0, result.output
    for port in flower["ports"]:
        assert str(port).startswith("127.0.0.1:"), port


def published(service: dict[str, Any]) -> list[str]:
    return [str(port) for port in service.get("ports", [])]


def test_only_the_proxy_is_published_on_every_interface(compose: dict[str, Any]) -> None:
    """The api sits behind nginx; Prometheus (no auth) and Flower on 127.0.0.1 only."""
    services = compose["services"]
    assert published(services["api"]) == []
    assert set(published(services["proxy"])) == {"80:80", "443:443"}
    for name, service in services.items():
        if name != "proxy":
            for port in published(service):
                assert port.startswith("127.0.0.1:"), (name, port)
    assert published(services["prometheus"]) == ["127.0.0.1:9090:9090"]


def test_the_proxy_runs_the_committed_config_and_is_the_only_trusted_forwarder(
    compose: dict[str, Any],
) -> None:
    proxy = compose["services"]["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in proxy["volumes"]
    for included in ("nginx-limits.conf", "nginx-rate-limited.conf"):  # beside it, as it says
        assert f"include {included};" in (ROOT / "deploy" / "nginx.conf").read_text()
        assert f"./deploy/proxy/{included}:/etc/nginx/{included}:ro" in proxy["volumes"]
    assert "./deploy/tls:/etc/nginx/tls:ro" in proxy["volumes"]
    config = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "default http://api:8000;" in config  # the api service by name (tests/test_proxy_dns.py)
    address = proxy["networks"]["default"]["ipv4_address"]
    api_env = compose["services"]["api"]["environment"]
    assert api_env["GEOSVC_FORWARDED_ALLOW_IPS"] == address  # uvicorn trusts X-Forwarded-* from it
    assert api_env["GEOSVC_ENV"] == "production"  # the merged anchor kept the rest
    subnet = compose["networks"]["default"]["ipam"]["config"][0]["subnet"]
    assert address.rsplit(".", 1)[0] == subnet.rsplit(".", 1)[0]


def test_migrations_run_once_before_the_api_serves(compose: dict[str, Any]) -> None:
    """Issue 38, item 6: a dedicated step migrates; the api refuses an old schema."""
    services = compose["services"]
    assert services["migrate"]["command"] == ["geosvc", "migrate"]
    assert services["migrate"]["restart"] == "no"
    assert services["api"]["depends_on"]["migrate"] == {
        "condition": "service_completed_successfully"
    }
    assert services["api"]["command"][-1] == "--no-migrate"


def test_every_geosvc_service_runs_the_versioned_image(compose: dict[str, Any]) -> None:
    for name in ("migrate", "api", "worker", "worker-bulk", "beat", "flower"):
        assert compose["services"][name]["image"] == (
            "geosvc:${GEOSVC_IMAGE_TAG:?set GEOSVC_IMAGE_TAG (make image prints it)}"
        )


def test_the_image_tag_is_the_package_version_and_the_commit() -> None:
    tag = subprocess.run(
        ["make", "-s", "image-tag"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    assert re.fullmatch(rf"{re.escape(version)}-{commit}(-dirty)?", tag), tag
    assert len(tag) <= 128  # a Docker tag's limit
