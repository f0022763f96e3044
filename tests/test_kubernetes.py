"""The Kubernetes manifests (deploy/kubernetes, issue 43): every overlay renders with
`kubectl kustomize`, every object validates against the Kubernetes schemas
(kubernetes-validate), the policy rules find nothing, the worker pools cover every queue,
and every process starts under GEOSVC_ENV=production with the settings they give it."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import typer
import yaml
from typer.testing import CliRunner

from app.cli import cli
from app.kit.config import Settings
from app.queue.celery import BULK_TOOL_QUEUES, JOBS_QUEUE, QUEUES, TOOLS_QUEUE
from tests.support.kubernetes import (
    ALERTS,
    MIGRATE,
    OVERLAYS,
    PRODUCTION,
    PROMETHEUS_RULE,
    ROOT,
    SECRET_NAME,
    SECRETS_EXAMPLE,
    Obj,
    container_env,
    env_file,
    geosvc_containers,
    name_of,
    policy_findings,
    process_refusals,
    prometheus_rule_text,
    render,
    require_kubectl,
)

# The oldest Kubernetes these manifests are for (autoscaling/v2, policy/v1 PDBs, Pod
# Security Admission labels, PDB-safe topology spread) and the newest schemas shipped.
KUBERNETES_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
# Custom resources, which the Kubernetes schemas do not cover (kubernetes-validate ships
# none, and their CRDs are not vendored here): TestQueueScaling checks KEDA's objects and
# TestMonitoring the Prometheus Operator's, by what they must select and carry.
CUSTOM_RESOURCE_GROUPS = ("keda.sh/", "monitoring.coreos.com/")
WORKER_COMPONENTS = ("worker", "worker-bulk", "worker-jobs", "worker-billing")
# Where the Dockerfile builds the indices (read-only at run time)
IMAGE_INDICES = "/opt/geosvc/geodata"


@pytest.fixture(scope="module", autouse=True)
def _kubectl() -> None:
    require_kubectl()


@pytest.fixture(scope="module")
def rendered() -> dict[Path, list[Obj]]:
    return {overlay: render(overlay) for overlay in OVERLAYS}


@pytest.fixture(scope="module")
def namespace(rendered: dict[Path, list[Obj]]) -> list[Obj]:
    """Everything the two production kustomizations put in the namespace."""
    return rendered[PRODUCTION] + rendered[MIGRATE]


@pytest.fixture(scope="module")
def hpa_fallback(tmp_path_factory: pytest.TempPathFactory) -> list[Obj]:
    """Production with the CPU autoscalers instead of KEDA (components/worker-hpa)."""
    directory = tmp_path_factory.mktemp("worker-hpa")

    def there(path: Path) -> str:  # kustomize takes relative paths only
        return os.path.relpath(path, directory)

    (directory / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources: [{there(ROOT / 'base' / 'app')}]\n"
        f"components: [{there(ROOT / 'components' / 'worker-hpa')}, "
        f"{there(PRODUCTION / 'release')}]\n"
    )
    return render(directory)


def by_kind(objects: list[Obj], kind: str) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def component(obj: Obj) -> str:
    return str(obj["metadata"]["labels"]["app.kubernetes.io/component"])


def cpu_cores(resources: Obj) -> float:
    """The container's CPU request in cores ("100m", "2")."""
    cpu = str(resources["requests"]["cpu"])
    return int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)


def worker_queues(objects: list[Obj]) -> dict[str, list[str]]:
    """Deployment name -> the queues its `geosvc worker --queues` takes."""
    found = {}
    for name, deployment in by_kind(objects, "Deployment").items():
        args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        if args[:2] == ["geosvc", "worker"]:
            found[name] = args[args.index("--queues") + 1].split(",")
    return found


class TestRender:
    def test_every_overlay_renders_into_the_namespace(
        self, rendered: dict[Path, list[Obj]]
    ) -> None:
        for overlay, objects in rendered.items():
            assert objects, overlay
            for obj in objects:
                if obj["kind"] != "Namespace":
                    assert obj["metadata"].get("namespace") == "geosvc", name_of(obj)

    def test_the_app_and_the_migration_run_one_image_and_one_config(
        self, rendered: dict[Path, list[Obj]]
    ) -> None:
        """A rollout migrates with exactly the image and settings it then runs."""
        images = {
            overlay: {c["image"] for _, c in geosvc_containers(objects)}
            for overlay, objects in rendered.items()
        }
        assert len(images[PRODUCTION]) == 1
        assert images[MIGRATE] == images[PRODUCTION]
        config = {  # the settings (the proxy's nginx files are for the app alone)
            overlay: {
                name: config_map
                for name, config_map in by_kind(objects, "ConfigMap").items()
                if not name.startswith("geosvc-proxy-")
            }
            for overlay, objects in rendered.items()
        }
        assert config[MIGRATE] == config[PRODUCTION]


class TestSchemas:
    @pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
    def test_every_builtin_object_validates(
        self, namespace: list[Obj], hpa_fallback: list[Obj], version: str
    ) -> None:
        checked = 0
        for obj in namespace + hpa_fallback:
            if obj["apiVersion"].startswith(CUSTOM_RESOURCE_GROUPS):
                continue  # KEDA's: TestQueueScaling checks those
            kubernetes_validate.validate(obj, version, strict=True)
            checked += 1
        assert checked >= 30

    def test_a_wrong_field_is_refused(self, namespace: list[Obj]) -> None:
        """The validator is strict: a misspelt field fails (so a pass means something)."""
        deployment = copy.deepcopy(by_kind(namespace, "Deployment")["geosvc-api"])
        deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)


class TestPolicy:
    def test_no_finding(self, namespace: list[Obj], hpa_fallback: list[Obj]) -> None:
        assert policy_findings(namespace) == []
        assert policy_findings(hpa_fallback) == []

    @pytest.mark.parametrize(
        ("path", "value", "finding"),
        [
            (("securityContext", "readOnlyRootFilesystem"), False, "root filesystem is writable"),
            (("securityContext", "allowPrivilegeEscalation"), True, "allowPrivilegeEscalation"),
            (("securityContext", "capabilities", "drop"), [], "capabilities not dropped"),
            (("resources", "limits"), {"cpu": "1"}, "no memory limit"),
            (("image",), "registry.example.com/geosvc:latest", "not pinned"),
            (("image",), "registry.example.com/geosvc", "not pinned"),
        ],
    )
    def test_a_weakened_container_is_found(
        self, namespace: list[Obj], path: tuple[str, ...], value: Any, finding: str
    ) -> None:
        objects = copy.deepcopy(namespace)
        target = by_kind(objects, "Deployment")["geosvc-worker"]["spec"]["template"]["spec"]
        place = target["containers"][0]
        for key in path[:-1]:
            place = place[key]
        place[path[-1]] = value
        findings = policy_findings(objects)
        assert len(findings) == 1
        assert "geosvc-worker container worker" in findings[0]
        assert finding in findings[0]

    def test_a_served_pod_without_readiness_and_a_missing_default_deny_are_found(
        self, namespace: list[Obj]
    ) -> None:
        objects = copy.deepcopy(namespace)
        api = by_kind(objects, "Deployment")["geosvc-api"]["spec"]["template"]["spec"]
        del api["containers"][0]["readinessProbe"]
        objects = [o for o in objects if name_of(o) != "NetworkPolicy/default-deny"]
        findings = policy_findings(objects)
        assert any("geosvc-api" in f and "readinessProbe" in f for f in findings)
        assert any("default-deny" in f for f in findings)

    def test_the_namespace_enforces_the_restricted_pod_security_profile(
        self, namespace: list[Obj]
    ) -> None:
        labels = by_kind(namespace, "Namespace")["geosvc"]["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"

    def test_the_data_services_admit_only_our_pods_and_their_operators(
        self, namespace: list[Obj]
    ) -> None:
        policies = by_kind(namespace, "NetworkPolicy")
        for name in ("geosvc-db-ingress", "geosvc-rabbitmq-ingress", "geosvc-redis-ingress"):
            for rule in policies[name]["spec"]["ingress"]:
                for source in rule["from"]:
                    assert "ipBlock" not in source, name
                    if "namespaceSelector" not in source:
                        assert source["podSelector"]["matchLabels"] in (
                            {"app.kubernetes.io/part-of": "geosvc"},
                            policies[name]["spec"]["podSelector"]["matchLabels"],
                        ), name

    def test_every_writer_has_its_writable_paths(self, namespace: list[Obj]) -> None:
        """With a read-only root, /tmp (metrics files, the worker heartbeat) and
        GEOSVC_DATA_DIR (indices, the beat schedule) must be volumes of the api,
        worker and beat containers."""
        secrets = env_file(SECRETS_EXAMPLE)
        for where, container in geosvc_containers(namespace):
            mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
            assert "/tmp" in mounts, where
            data_dir = container_env(container, namespace, secrets)["GEOSVC_DATA_DIR"]
            if container["args"][1] in ("api", "beat", "data"):
                assert data_dir in mounts, where
            if container["args"][1] == "worker":  # reads the image's indices, writes nothing
                assert data_dir == IMAGE_INDICES, where


class TestMigration:
    def test_the_job_migrates_and_the_api_leaves_it_to_the_job_when_it_can(
        self, rendered: dict[Path, list[Obj]]
    ) -> None:
        """The Job runs `geosvc migrate`; once `geosvc api` can skip its own migration
        (--no-migrate), the api pods must, so a rollout never migrates from many pods."""
        job = by_kind(rendered[MIGRATE], "Job")["geosvc-migrate"]
        assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ["geosvc", "migrate"]
        options = {
            option
            for param in typer.main.get_command(cli).commands["api"].params  # type: ignore[attr-defined]
            for option in (*param.opts, *param.secondary_opts)
        }
        api = by_kind(rendered[PRODUCTION], "Deployment")["geosvc-api"]
        args = api["spec"]["template"]["spec"]["containers"][0]["args"]
        assert ("--no-migrate" in args) == ("--no-migrate" in options)


class TestQueueScaling:
    def test_the_worker_pools_take_every_queue_once_and_paying_calls_alone(
        self, namespace: list[Obj]
    ) -> None:
        pools = worker_queues(namespace)
        taken = [queue for queues in pools.values() for queue in queues]
        assert sorted(taken) == sorted(QUEUES)
        paying = next(queues for queues in pools.values() if TOOLS_QUEUE in queues)
        assert paying == [TOOLS_QUEUE]
        bulk = next(queues for queues in pools.values() if BULK_TOOL_QUEUES[0] in queues)
        assert sorted(bulk) == sorted(BULK_TOOL_QUEUES)
        assert [JOBS_QUEUE] in pools.values()  # a pool of their own (SCHED_IDLE)

    def test_jobs_have_the_lowest_cpu_weight(self, namespace: list[Obj]) -> None:
        """Issue 59, item 6: between pods the kernel shares CPU by cgroup weight, which
        follows the CPU request; the jobs pool's is the smallest of every deployment."""
        requests = {
            name: cpu_cores(d["spec"]["template"]["spec"]["containers"][0]["resources"])
            for name, d in by_kind(namespace, "Deployment").items()
            if component(d) in ("api", *WORKER_COMPONENTS)
        }
        jobs = requests.pop("geosvc-worker-jobs")
        assert jobs <= min(requests.values()) / 2, requests

    def test_keda_scales_each_pool_on_each_of_its_queues(self, namespace: list[Obj]) -> None:
        scaled = by_kind(namespace, "ScaledObject")
        authentication = by_kind(namespace, "TriggerAuthentication")
        secret_keys = env_file(SECRETS_EXAMPLE)
        for deployment, queues in worker_queues(namespace).items():
            owners = [
                s for s in scaled.values() if s["spec"]["scaleTargetRef"]["name"] == deployment
            ]
            assert len(owners) == 1, deployment
            spec = owners[0]["spec"]
            assert spec["minReplicaCount"] >= 1  # the billing pool drains the outbox
            assert spec["fallback"]["replicas"] >= spec["minReplicaCount"]
            assert sorted(t["metadata"]["queueName"] for t in spec["triggers"]) == sorted(queues)
            for trigger in spec["triggers"]:
                assert trigger["type"] == "rabbitmq"
                auth = authentication[trigger["authenticationRef"]["name"]]
                for ref in auth["spec"]["secretTargetRef"]:
                    assert ref["name"] == SECRET_NAME
                    assert ref["key"] in secret_keys
        assert len(scaled) == len(worker_queues(namespace))

    def test_without_keda_each_pool_has_a_cpu_autoscaler(self, hpa_fallback: list[Obj]) -> None:
        targets = {
            h["spec"]["scaleTargetRef"]["name"]
            for h in by_kind(hpa_fallback, "HorizontalPodAutoscaler").values()
        }
        assert targets == {"geosvc-api", *worker_queues(hpa_fallback)}
        assert not by_kind(hpa_fallback, "ScaledObject")

    def test_every_worker_pod_reads_the_indices_built_into_the_image(
        self, namespace: list[Obj]
    ) -> None:
        """Issue 55, item 4: every `geosvc worker` loads the geodata indices at start
        (workers/tools.py). They are built once per release into the image (Dockerfile),
        not by an init container in every new pod: a scale-up waits for no build."""
        secrets = env_file(SECRETS_EXAMPLE)
        dockerfile = (ROOT.parents[1] / "Dockerfile").read_text()
        assert f"RUN geosvc data build --data-dir {IMAGE_INDICES}\n" in dockerfile
        for name in worker_queues(namespace):
            spec = by_kind(namespace, "Deployment")[name]["spec"]["template"]["spec"]
            worker = spec["containers"][0]
            assert container_env(worker, namespace, secrets)["GEOSVC_DATA_DIR"] == IMAGE_INDICES
            mounted = {m["mountPath"] for m in worker["volumeMounts"]}
            assert not any(IMAGE_INDICES.startswith(path) for path in mounted), name
            assert spec.get("initContainers", []) == [], name

    def test_exactly_one_beat(self, namespace: list[Obj]) -> None:
        beats = [
            d
            for d in by_kind(namespace, "Deployment").values()
            if d["spec"]["template"]["spec"]["containers"][0]["args"][:2] == ["geosvc", "beat"]
        ]
        assert len(beats) == 1
        beat = beats[0]
        assert beat["spec"]["replicas"] == 1
        assert beat["spec"]["strategy"] == {"type": "Recreate"}
        scalers = [
            *by_kind(namespace, "HorizontalPodAutoscaler").values(),
            *by_kind(namespace, "ScaledObject").values(),
        ]
        assert all(s["spec"]["scaleTargetRef"]["name"] != beat["metadata"]["name"] for s in scalers)

    def test_scaled_deployments_spread_across_nodes_and_have_a_disruption_budget(
        self, namespace: list[Obj]
    ) -> None:
        budgets = [
            p["spec"]["selector"]["matchLabels"]
            for p in by_kind(namespace, "PodDisruptionBudget").values()
        ]
        for deployment in by_kind(namespace, "Deployment").values():
            if component(deployment) not in ("api", *WORKER_COMPONENTS):
                continue
            spec = deployment["spec"]["template"]["spec"]
            keys = {c["topologyKey"] for c in spec["topologySpreadConstraints"]}
            assert "kubernetes.io/hostname" in keys, name_of(deployment)
            assert deployment["spec"]["selector"]["matchLabels"] in budgets, name_of(deployment)


class TestProductionSettings:
    """The manifests give every process what production requires: the rules are the
    app's own (Settings and the processes' start-up checks), not a list copied here."""

    def test_every_process_would_start(self, namespace: list[Obj]) -> None:
        secrets = env_file(SECRETS_EXAMPLE)
        found = geosvc_containers(namespace)
        assert {c["args"][1] for _, c in found} >= {"api", "worker", "beat", "flower", "migrate"}
        for where, container in found:
            env = container_env(container, namespace, secrets)
            assert env["GEOSVC_ENV"] == "production", where
            assert process_refusals(env, container["args"]) == [], where

    def test_every_probe_command_would_start(self, namespace: list[Obj]) -> None:
        """A `geosvc` probe runs with its container's environment (only that pool's
        secrets, issue 51 item 6): it must not be refused either."""
        secrets = env_file(SECRETS_EXAMPLE)
        probes = [
            (where, container, probe["exec"]["command"])
            for where, container in geosvc_containers(namespace)
            for kind in ("livenessProbe", "readinessProbe", "startupProbe")
            if "exec" in (probe := container.get(kind, {}))
        ]
        assert {command[1] for _, _, command in probes} == {"worker-health"}
        for where, container, command in probes:
            env = container_env(container, namespace, secrets)
            assert process_refusals(env, command) == [], where

    def test_a_setting_production_requires_missing_from_the_manifests_is_caught(
        self, namespace: list[Obj]
    ) -> None:
        """Each setting whose absence production refuses is named by the refusal, and
        there are such settings (the check above has teeth)."""
        secrets = env_file(SECRETS_EXAMPLE)
        where, api = next((w, c) for w, c in geosvc_containers(namespace) if c["args"][1] == "api")
        env = container_env(api, namespace, secrets)
        required = []
        for name in env:
            refusals = process_refusals({k: v for k, v in env.items() if k != name}, api["args"])
            if refusals:
                assert any(name in refusal for refusal in refusals), (name, refusals)
                required.append(name)
        assert "GEOSVC_SECRET_PEPPER" in required, where
        assert len(required) >= 8

    def test_every_setting_given_is_one_the_app_reads(self, namespace: list[Obj]) -> None:
        """Settings ignores unknown GEOSVC_ variables: a misspelt name would be lost."""
        secrets = env_file(SECRETS_EXAMPLE)
        known = {f"GEOSVC_{field.upper()}" for field in Settings.model_fields}
        for where, container in geosvc_containers(namespace):
            unknown = set(container_env(container, namespace, secrets)) - known
            assert unknown == set(), where


class TestBackups:
    """Issue 55, item 1: a daily CronJob runs `geosvc admin backup` into a claim of its own."""

    def test_a_cronjob_dumps_daily_into_its_claim_with_retention(
        self, namespace: list[Obj]
    ) -> None:
        cronjob = by_kind(namespace, "CronJob")["geosvc-backup"]
        assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
        minute, hour, *every_day = cronjob["spec"]["schedule"].split()
        assert every_day == ["*", "*", "*"]
        spec = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        [container] = spec["containers"]
        args = container["args"]
        assert args[:3] == ["geosvc", "admin", "backup"]
        directory = args[args.index("--dir") + 1]
        assert int(args[args.index("--keep-days") + 1]) >= 7
        volume = next(m["name"] for m in container["volumeMounts"] if m["mountPath"] == directory)
        claim = next(v for v in spec["volumes"] if v["name"] == volume)["persistentVolumeClaim"]
        assert claim["claimName"] in by_kind(namespace, "PersistentVolumeClaim")
        assert CliRunner().invoke(cli, [*args[1:], "--help"]).exit_code == 0


class TestMonitoring:
    """Issue 55, item 2: with the Prometheus Operator, the rules as a PrometheusRule and
    the scrapes as a ServiceMonitor (api) and a PodMonitor (workers). Their CRDs are not
    in kubernetes-validate: checked here by what they must carry and select."""

    def test_the_prometheus_rule_is_alerts_yml(self, namespace: list[Obj]) -> None:
        assert PROMETHEUS_RULE.read_text() == prometheus_rule_text(), (
            "regenerate: .venv/bin/python -m tests.support.kubernetes"
        )
        [rule] = by_kind(namespace, "PrometheusRule").values()
        assert rule["spec"]["groups"] == yaml.safe_load(ALERTS.read_text())["groups"]

    def test_the_service_monitor_scrapes_the_api_service_with_the_token(
        self, namespace: list[Obj]
    ) -> None:
        [monitor] = by_kind(namespace, "ServiceMonitor").values()
        service = by_kind(namespace, "Service")["geosvc-api"]
        selector = monitor["spec"]["selector"]["matchLabels"]
        assert selector.items() <= service["metadata"]["labels"].items()
        [endpoint] = monitor["spec"]["endpoints"]
        assert endpoint["port"] in {port["name"] for port in service["spec"]["ports"]}
        assert endpoint["path"] == "/metrics"
        self.assert_token(endpoint)

    def test_the_pod_monitor_scrapes_every_worker_pool_with_the_token(
        self, namespace: list[Obj]
    ) -> None:
        [monitor] = by_kind(namespace, "PodMonitor").values()
        selector = monitor["spec"]["selector"]
        [endpoint] = monitor["spec"]["podMetricsEndpoints"]
        scraped = set()
        for name in worker_queues(namespace):
            template = by_kind(namespace, "Deployment")[name]["spec"]["template"]
            labels = template["metadata"]["labels"]
            assert selector["matchLabels"].items() <= labels.items(), name
            [expression] = selector["matchExpressions"]
            assert labels[expression["key"]] in expression["values"], name
            ports = {p["name"] for p in template["spec"]["containers"][0]["ports"]}
            assert endpoint["port"] in ports, name
            scraped.add(name)
        assert len(scraped) == len(WORKER_COMPONENTS)
        self.assert_token(endpoint)

    @staticmethod
    def assert_token(endpoint: Obj) -> None:
        authorization = endpoint["authorization"]
        assert authorization["type"] == "Bearer"
        assert authorization["credentials"]["name"] == SECRET_NAME
        assert authorization["credentials"]["key"] in env_file(SECRETS_EXAMPLE)
