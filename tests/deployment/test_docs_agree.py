"""Docs that agree with the config they describe (issue 55, item 6): the request limits
the docs state are nginx-limits.conf's, the ingress adds none of its own, and the
Kubernetes secrets example says what the code does with the pepper (it can be rotated,
with the old one as GEOSVC_SECRET_PEPPER_PREVIOUS)."""

from __future__ import annotations

import re
from pathlib import Path

from app.kit.config import Settings

ROOT = Path(__file__).resolve().parents[2]
LIMITS = (ROOT / "deploy/proxy/nginx-limits.conf").read_text()


def one(pattern: str) -> str:
    [value] = re.findall(pattern, LIMITS, re.MULTILINE)
    return str(value)


def stated_limits() -> str:
    connections = one(r"^limit_conn conn_per_ip (\d+);")
    address_rate = one(r"zone=req_per_ip:\S+ rate=(\d+)r/s;")
    address_burst = one(r"^limit_req zone=req_per_ip burst=(\d+)")
    key_rate = one(r"zone=req_per_key:\S+ rate=(\d+)r/s;")
    key_burst = one(r"^limit_req zone=req_per_key burst=(\d+)")
    return (
        f"{connections} connections and {address_rate} requests/s (burst {address_burst}) "
        f"per client address and {key_rate} requests/s (burst {key_burst}) per credential"
    )


def prose(path: str) -> str:
    return " ".join((ROOT / path).read_text().split())


def test_the_docs_state_the_proxys_limits() -> None:
    limits = stated_limits()
    assert limits.startswith("64 connections and 100 requests/s (burst 200)")
    for doc in ("docs/OPERATIONS.md", "docs/DEPLOYMENT.md"):
        assert limits in prose(doc), doc


def test_the_ingress_sets_no_limits_of_its_own() -> None:
    ingress = (ROOT / "deploy/kubernetes/overlays/production/ingress.yaml").read_text()
    annotations = re.findall(r"nginx\.ingress\.kubernetes\.io/(limit-[\w-]+)", ingress)
    assert annotations == []


def test_the_secrets_example_says_the_pepper_rotates_as_the_code_allows() -> None:
    assert "secret_pepper_previous" in Settings.model_fields
    example = prose("deploy/kubernetes/secrets.env.example")
    assert "Never change GEOSVC_SECRET_PEPPER" not in example
    assert "GEOSVC_SECRET_PEPPER_PREVIOUS" in example
    assert "GEOSVC_SECRET_PEPPER_PREVIOUS" in prose("docs/DEPLOYMENT.md")
