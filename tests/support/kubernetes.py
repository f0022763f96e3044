"""The Kubernetes manifests (deploy/kubernetes) as objects: rendered by `kubectl kustomize`,
with each container's environment resolved (and what its process would refuse to start
with), and judged by a written set of policy rules.

The rules are the high-severity ones of the usual scanners (checkov, kube-score, Pod
Security "restricted"), for what these manifests use: nothing privileged, non-root,
read-only root filesystems, dropped capabilities, requests and limits, probes, pinned
images, a default-deny NetworkPolicy. A rule returns findings as "<object>: <what>".
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from app.kit.config import Settings
from app.kit.production import serving_as
from app.observability.exposition import require_metrics_protection
from tests.support.services import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
ALERTS = ROOT.parent / "alerts.yml"
PROMETHEUS_RULE = ROOT / "components" / "monitoring" / "prometheusrule.yaml"
PRODUCTION = ROOT / "overlays" / "production"
MIGRATE = PRODUCTION / "migrate"
OVERLAYS = (PRODUCTION, MIGRATE)
SECRETS_EXAMPLE = ROOT / "secrets.env.example"
SECRET_NAME = "geosvc-secrets"
KUBECTL = shutil.which("kubectl")


def require_kubectl() -> None:
    """Skip without kubectl (with its built-in kustomize); under REQUIRE_SERVICES=1 fail."""
    if KUBECTL is None:
        if REQUIRE_SERVICES:
            pytest.fail("kubectl (with its built-in kustomize) is required")
        pytest.skip("kubectl not installed")


Obj = dict[str, Any]
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")
# Containers that need no probe, and why (a stated exception, not an oversight).
NO_PROBE = {
    "geosvc-beat/beat": "Celery beat has no health endpoint; it exits on a fatal error",
    "geosvc-migrate/migrate": "a Job: it runs to completion",
    "geosvc-backup/backup": "a CronJob's Job: it runs to completion",
}


def render(directory: Path) -> list[Obj]:
    """`kubectl kustomize <directory>`, as objects."""
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [obj for obj in yaml.safe_load_all(done.stdout) if obj]


def name_of(obj: Obj) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def pod_spec(obj: Obj) -> Obj | None:
    if obj["kind"] not in WORKLOADS:
        return None
    spec = obj["spec"]
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return spec["template"]["spec"]  # type: ignore[no-any-return]


def containers(spec: Obj) -> Iterator[tuple[Obj, bool]]:
    """(container, whether it is an init container)."""
    for container in spec.get("initContainers", []):
        yield container, True
    for container in spec.get("containers", []):
        yield container, False


def env_file(path: Path) -> dict[str, str]:
    """KEY=value lines, as `kubectl create secret --from-env-file` reads them."""
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value
    return values


def container_env(container: Obj, objects: list[Obj], secrets: dict[str, str]) -> dict[str, str]:
    """What the container's process sees: its ConfigMaps from the render, the Secret
    geosvc-secrets (made outside the manifests) from `secrets`, then its own `env`."""
    config_maps = {
        o["metadata"]["name"]: o.get("data", {}) for o in objects if o["kind"] == "ConfigMap"
    }

    def secret(name: str) -> dict[str, str]:
        assert name == SECRET_NAME, f"unknown Secret {name}"
        return secrets

    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(config_maps[source["configMapRef"]["name"]])
        else:
            env.update(secret(source["secretRef"]["name"]))
    for variable in container.get("env", []):
        if "value" in variable:
            env[variable["name"]] = variable["value"]
        elif "configMapKeyRef" in (ref := variable["valueFrom"]):
            env[variable["name"]] = config_maps[ref["configMapKeyRef"]["name"]][
                ref["configMapKeyRef"]["key"]
            ]
        else:
            values = secret(ref["secretKeyRef"]["name"])
            key = ref["secretKeyRef"]["key"]
            if key in values or not ref["secretKeyRef"].get("optional"):
                env[variable["name"]] = values[key]
    return env


def secret_keys(container: Obj) -> tuple[set[str], set[str]]:
    """(required, optional) keys of the Secret geosvc-secrets the container's
    environment takes; a whole-Secret `envFrom` counts as the key "*"."""
    required, optional = set(), set()
    for source in container.get("envFrom", []):
        if "secretRef" in source:
            required.add("*")
    for variable in container.get("env", []):
        ref = variable.get("valueFrom", {}).get("secretKeyRef")
        if ref is not None:
            assert ref["name"] == SECRET_NAME, ref
            assert variable["name"] == ref["key"], variable  # the setting it names
            (optional if ref.get("optional") else required).add(ref["key"])
    return required, optional


def process_of(args: list[str]) -> str:
    """The process `geosvc <args>` names itself (app/cli.py: production's SECRETS_READ_BY)."""
    if args[1] == "admin":  # app/admin/cli.py: `backup` alone, the rest as the api
        return "backup" if args[2] == "backup" else "api"
    if args[1] == "worker-health":
        return "worker"
    if args[1] == "worker":
        queues = args[args.index("--queues") + 1].split(",") if "--queues" in args else []
        return "worker-billing" if "billing" in queues or not queues else "worker"
    return args[1]


# --- what the processes would refuse ---------------------------------------------------


_PLACEHOLDER = re.compile(r"REPLACE[A-Za-z0-9_-]*")


def operator_filled(env: dict[str, str]) -> dict[str, str]:
    """`env` with each REPLACE-... placeholder of the example files (secrets.env.example,
    the overlay's config.env) replaced by a random value, as an operator does: production
    refuses the placeholders themselves (tests/deployment/test_check_config.py)."""
    return {
        name: _PLACEHOLDER.sub(lambda _: secrets.token_hex(16), value)
        for name, value in env.items()
    }


def process_refusals(env: dict[str, str], args: list[str]) -> list[str]:
    """What a `geosvc <args>` process given `env` (and nothing else), its placeholders
    filled in, would refuse to start with: the production rules of Settings
    (app/kit/production.py), the metrics token of the api and worker, and Flower's password
    (app/cli.py)."""
    env = operator_filled(env)
    saved = {k: v for k, v in os.environ.items() if k.startswith("GEOSVC_")}
    for key in saved:
        del os.environ[key]
    os.environ.update(env)
    try:
        with serving_as(process_of(args)):
            settings = Settings(_env_file=None)  # type: ignore[call-arg]
    except ValidationError as exc:
        return [str(error["msg"]) for error in exc.errors()]
    finally:
        for key in env:
            os.environ.pop(key, None)
        os.environ.update(saved)
    refusals = []
    if args[1] in ("api", "worker"):
        try:
            require_metrics_protection(settings)
        except Exception as exc:  # noqa: BLE001 - any refusal is the finding
            refusals.append(str(exc))
    if args[1] == "flower" and settings.flower_auth is None:
        refusals.append("GEOSVC_FLOWER_AUTH must be set for geosvc flower in production")
    return refusals


def geosvc_containers(objects: list[Obj]) -> list[tuple[str, Obj]]:
    return [
        (f"{name_of(o)}/{c['name']}", c)
        for o in objects
        if (spec := pod_spec(o)) is not None
        for c, _ in containers(spec)
        if c["args"][0] == "geosvc"
    ]


# --- policy rules -----------------------------------------------------------------------


def policy_findings(objects: list[Obj]) -> list[str]:
    findings: list[str] = []
    served = served_pods(objects)
    for obj in objects:
        spec = pod_spec(obj)
        if spec is None:
            continue
        labels = template_labels(obj)
        findings += [f"{name_of(obj)}: {what}" for what in pod_rules(spec)]
        for container, init in containers(spec):
            where = f"{name_of(obj)} container {container['name']}"
            findings += [f"{where}: {what}" for what in container_rules(container)]
            if not init:
                key = f"{obj['metadata']['name']}/{container['name']}"
                findings += [
                    f"{where}: {what}" for what in probe_rules(container, key, labels in served)
                ]
    findings += network_rules(objects)
    return findings


def template_labels(obj: Obj) -> frozenset[tuple[str, str]]:
    template = obj["spec"].get("template") or obj["spec"]["jobTemplate"]["spec"]["template"]
    return frozenset(template["metadata"].get("labels", {}).items())


def served_pods(objects: list[Obj]) -> set[frozenset[tuple[str, str]]]:
    """Template labels of the workloads some Service sends traffic to."""
    selectors = [
        set(o["spec"].get("selector", {}).items()) for o in objects if o["kind"] == "Service"
    ]
    return {
        template_labels(o)
        for o in objects
        if pod_spec(o) is not None
        and any(sel and sel <= set(template_labels(o)) for sel in selectors)
    }


def pod_rules(spec: Obj) -> Iterator[str]:
    context = spec.get("securityContext", {})
    if context.get("runAsNonRoot") is not True:
        yield "runAsNonRoot is not true"
    if not context.get("runAsUser"):
        yield "no non-zero runAsUser"
    if context.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        yield "seccompProfile is not RuntimeDefault"
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            yield f"{field} is set"
    if spec.get("automountServiceAccountToken") is not False:
        yield "mounts a service account token"
    for volume in spec.get("volumes", []):
        if "hostPath" in volume:
            yield f"volume {volume['name']} is a hostPath"


def container_rules(container: Obj) -> Iterator[str]:
    context = container.get("securityContext", {})
    if context.get("privileged"):
        yield "privileged"
    if context.get("allowPrivilegeEscalation") is not False:
        yield "allowPrivilegeEscalation is not false"
    if context.get("readOnlyRootFilesystem") is not True:
        yield "root filesystem is writable"
    capabilities = context.get("capabilities", {})
    if "ALL" not in capabilities.get("drop", []):
        yield "capabilities not dropped (drop: [ALL])"
    if capabilities.get("add"):
        yield f"adds capabilities {capabilities['add']}"
    resources = container.get("resources", {})
    for kind in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            if resource not in resources.get(kind, {}):
                yield f"no {resource} {kind[:-1]}"
    image = container.get("image", "")
    tag = image.rsplit("/", 1)[-1].partition(":")[2]
    if "@sha256:" not in image and tag in ("", "latest"):
        yield f"image {image!r} is not pinned to a tag or digest"


def probe_rules(container: Obj, key: str, served: bool) -> Iterator[str]:
    if key in NO_PROBE:
        return
    if "livenessProbe" not in container:
        yield "no livenessProbe"
    if served and "readinessProbe" not in container:
        yield "behind a Service without a readinessProbe"


def network_rules(objects: list[Obj]) -> Iterator[str]:
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"]
    if not any(workload for workload in objects if pod_spec(workload) is not None):
        return
    default_deny = [
        p
        for p in policies
        if p["spec"]["podSelector"] == {}
        and set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
    ]
    if not default_deny:
        yield "no default-deny NetworkPolicy (ingress and egress) for the namespace"
    for policy in policies:
        for rule in policy["spec"].get("ingress", []):
            if not rule.get("from"):
                yield f"{name_of(policy)}: an ingress rule admits every source"


# --- the PrometheusRule: deploy/alerts.yml for the Prometheus Operator -----------------


class _Literal(str):
    """A multi-line string written as a YAML block (the rules' expressions stay legible)."""


class _Dumper(yaml.SafeDumper):
    pass


def _literal(dumper: yaml.SafeDumper, value: _Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


_Dumper.add_representer(_Literal, _literal)


def prometheus_rule_text() -> str:
    """components/monitoring/prometheusrule.yaml as it must read: the groups of
    deploy/alerts.yml, unchanged. Rewrite it after changing the rules with
    `.venv/bin/python -m tests.support.kubernetes`."""
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    for group in groups:
        for rule in group["rules"]:
            if "\n" in rule["expr"]:
                rule["expr"] = _Literal(rule["expr"])
    rule = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "geosvc",
            "labels": {"app.kubernetes.io/name": "geosvc"},
        },
        "spec": {"groups": groups},
    }
    header = (
        "# deploy/alerts.yml as a PrometheusRule (written by `.venv/bin/python -m\n"
        "# tests.support.kubernetes`; tests/test_kubernetes.py fails when the two differ).\n"
        "# Add the label your Prometheus's ruleSelector asks for (kube-prometheus-stack:\n"
        "# `release: <its release name>`) in your overlay.\n"
    )
    return header + yaml.dump(rule, Dumper=_Dumper, sort_keys=False, width=100)


if __name__ == "__main__":
    PROMETHEUS_RULE.write_text(prometheus_rule_text())
