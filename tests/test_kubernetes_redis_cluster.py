"""deploy/kubernetes/overlays/redis-cluster (issue 56, item 4): production on a Redis Cluster
run by the OT-Container-Kit redis-operator. It renders with `kubectl kustomize`, every
built-in object validates against the Kubernetes schemas (kubernetes-validate); the
operator's RedisCluster is a custom resource whose CRD kubernetes-validate does not ship
and which is not vendored here, so it is skipped there and checked below by what it must
carry. The policy rules find nothing, every process would start with the cluster's
settings, and the migration Job reads the same config as the app."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest

from tests.support.kubernetes import (
    ROOT,
    SECRETS_EXAMPLE,
    Obj,
    container_env,
    env_file,
    geosvc_containers,
    policy_findings,
    process_refusals,
    render,
    require_kubectl,
)
from tests.test_kubernetes import CUSTOM_RESOURCE_GROUPS, KUBERNETES_VERSIONS, by_kind

OVERLAY = ROOT / "overlays" / "redis-cluster"
MIGRATE = OVERLAY / "migrate"
# The operator's custom resources: no schema here (see the module's docstring).
OPERATOR_GROUP = "redis.redis.opstreelabs.in/"


@pytest.fixture(scope="module", autouse=True)
def _kubectl() -> None:
    require_kubectl()


@pytest.fixture(scope="module")
def rendered() -> dict[Path, list[Obj]]:
    return {overlay: render(overlay) for overlay in (OVERLAY, MIGRATE)}


@pytest.fixture(scope="module")
def namespace(rendered: dict[Path, list[Obj]]) -> list[Obj]:
    return rendered[OVERLAY] + rendered[MIGRATE]


def config_of(objects: list[Obj]) -> dict[str, str]:
    [config] = [o for o in objects if o["kind"] == "ConfigMap" and "GEOSVC_ENV" in o["data"]]
    return dict(config["data"])


class TestRender:
    def test_everything_is_in_the_namespace(self, namespace: list[Obj]) -> None:
        for obj in namespace:
            if obj["kind"] != "Namespace":
                assert obj["metadata"].get("namespace") == "geosvc", obj["metadata"]["name"]

    @pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
    def test_every_builtin_object_validates(self, namespace: list[Obj], version: str) -> None:
        checked = 0
        for obj in namespace:
            if obj["apiVersion"].startswith((*CUSTOM_RESOURCE_GROUPS, OPERATOR_GROUP)):
                continue
            kubernetes_validate.validate(obj, version, strict=True)
            checked += 1
        assert checked >= 30

    def test_no_policy_finding(self, namespace: list[Obj]) -> None:
        assert policy_findings(namespace) == []


class TestCluster:
    def test_the_app_and_the_migration_read_the_cluster_settings(
        self, rendered: dict[Path, list[Obj]]
    ) -> None:
        config = config_of(rendered[OVERLAY])
        assert config["GEOSVC_REDIS_CLUSTER"] == "true"
        assert int(config["GEOSVC_OUTBOX_BUCKETS"]) >= 3  # at least a list per leader
        assert config_of(rendered[MIGRATE]) == config

    def test_every_process_would_start_with_celery_on_rabbitmq(self, namespace: list[Obj]) -> None:
        secrets = env_file(SECRETS_EXAMPLE)
        found = geosvc_containers(namespace)
        assert {c["args"][1] for _, c in found} >= {"api", "worker", "beat", "migrate"}
        for where, container in found:
            env = container_env(container, namespace, secrets)
            assert process_refusals(env, container["args"]) == [], where
            if "GEOSVC_REDIS_URL" in env:  # the migration reaches no Redis
                assert env["GEOSVC_REDIS_CLUSTER"] == "true", where
                assert env["GEOSVC_BROKER_URL"].startswith("amqp://"), where

    def test_a_cluster_as_celerys_broker_would_be_refused(self, namespace: list[Obj]) -> None:
        """The check above has teeth: with no broker named (the cluster would be Celery's),
        the api refuses to start."""
        secrets = env_file(SECRETS_EXAMPLE)
        where, api = next((w, c) for w, c in geosvc_containers(namespace) if c["args"][1] == "api")
        env = container_env(api, namespace, secrets)
        del env["GEOSVC_BROKER_URL"]
        assert any("GEOSVC_REDIS_CLUSTER" in r for r in process_refusals(env, api["args"])), where

    def test_an_operator_run_cluster_of_three_leaders_each_with_a_follower(
        self, namespace: list[Obj]
    ) -> None:
        [cluster] = [o for o in namespace if o["kind"] == "RedisCluster"]
        assert cluster["apiVersion"] == "redis.redis.opstreelabs.in/v1beta2"
        spec = cluster["spec"]
        assert spec["clusterSize"] == spec["redisLeader"]["replicas"] == 3
        assert spec["redisFollower"]["replicas"] >= 1
        assert spec["persistenceEnabled"] is True
        resources = spec["kubernetesConfig"]["resources"]
        assert resources["requests"]["cpu"] == resources["limits"]["cpu"] == "1"
        assert "memory" in resources["limits"]
        # what the namespace's restricted Pod Security profile admits
        assert spec["podSecurityContext"]["runAsNonRoot"] is True
        assert spec["podSecurityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
        assert spec["securityContext"]["allowPrivilegeEscalation"] is False
        assert spec["securityContext"]["capabilities"]["drop"] == ["ALL"]
        # its pods carry the label base/app's policies admit our pods to
        assert cluster["metadata"]["labels"]["app.kubernetes.io/name"] == "geosvc-redis"
        config = by_kind(namespace, "ConfigMap")["geosvc-redis-cluster-config"]
        assert "appendfsync everysec" in config["data"]["redis-additional.conf"]

    def test_no_egress_to_a_managed_redis_and_the_bus_open_between_nodes(
        self, namespace: list[Obj]
    ) -> None:
        policies = by_kind(namespace, "NetworkPolicy")
        assert "geosvc-egress-redis" not in policies
        bus = policies["geosvc-redis-cluster"]["spec"]
        for rules in (bus["ingress"][0]["ports"], bus["egress"][0]["ports"]):
            assert {p["port"] for p in rules} == {6379, 16379}

    def test_the_billing_pool_runs_drains_in_parallel(self, namespace: list[Obj]) -> None:
        scaled = by_kind(namespace, "ScaledObject")["geosvc-worker-billing"]["spec"]
        assert scaled["minReplicaCount"] >= 2
        assert scaled["fallback"]["replicas"] >= 2
