"""What each Kubernetes workload may hold and reach (issue 51, item 6), on the manifests
as `kubectl kustomize` renders them (tests/test_kubernetes.py checks the rest): only the
secrets its process reads, the proxy's limits in front of the api (the same files as
compose; tests/test_proxy_kubernetes.py runs them), Redis's ports towards the one Redis
the overlay names."""

from __future__ import annotations

import pytest

from app.kit.production import OPTIONAL_SECRETS_READ_BY, SECRETS_READ_BY
from tests.support.kubernetes import (
    KUBECTL,
    MIGRATE,
    PRODUCTION,
    ROOT,
    SECRETS_EXAMPLE,
    Obj,
    container_env,
    containers,
    env_file,
    geosvc_containers,
    name_of,
    pod_spec,
    process_of,
    process_refusals,
    render,
    secret_keys,
)
from tests.support.services import REQUIRE_SERVICES

API_LABELS = {"app.kubernetes.io/name": "geosvc", "app.kubernetes.io/component": "api"}
PROXY_LABELS = {"app.kubernetes.io/name": "geosvc", "app.kubernetes.io/component": "proxy"}


@pytest.fixture(scope="module")
def namespace() -> list[Obj]:
    """Everything the two production kustomizations put in the namespace."""
    if KUBECTL is None:
        if REQUIRE_SERVICES:
            pytest.fail("kubectl (with its built-in kustomize) is required")
        pytest.skip("kubectl not installed")
    return render(PRODUCTION) + render(MIGRATE)


def by_kind(objects: list[Obj], kind: str) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


class TestReach:
    def test_only_the_proxy_admits_the_ingress_controller_and_only_the_proxy_the_api(
        self, namespace: list[Obj]
    ) -> None:
        """Issue 51, item 6: every request from outside passes the proxy's limits."""
        policies = by_kind(namespace, "NetworkPolicy")
        admitting = [
            p["spec"]["podSelector"]
            for p in policies.values()
            for rule in p["spec"].get("ingress", [])
            for source in rule.get("from", [])
            if source.get("namespaceSelector", {})
            .get("matchLabels", {})
            .get("kubernetes.io/metadata.name")
            == "ingress-nginx"
        ]
        assert admitting == [{"matchLabels": PROXY_LABELS}]
        backends = [
            path["backend"]["service"]["name"]
            for rule in by_kind(namespace, "Ingress")["geosvc"]["spec"]["rules"]
            for path in rule["http"]["paths"]
        ]
        assert backends == ["geosvc-proxy"]
        assert by_kind(namespace, "Service")["geosvc-proxy"]["spec"]["selector"] == PROXY_LABELS
        api_sources = [
            source
            for p in policies.values()
            if p["spec"]["podSelector"] == {"matchLabels": API_LABELS}
            for rule in p["spec"].get("ingress", [])
            for source in rule["from"]
        ]
        in_namespace = [s for s in api_sources if "namespaceSelector" not in s]
        assert in_namespace == [{"podSelector": {"matchLabels": PROXY_LABELS}}]
        others = [
            s["namespaceSelector"]["matchLabels"] for s in api_sources if "podSelector" not in s
        ]
        assert others == [{"kubernetes.io/metadata.name": "monitoring"}]  # /metrics only

    def test_no_pod_reaches_redis_ports_beyond_the_redis_the_overlay_names(
        self, namespace: list[Obj]
    ) -> None:
        """Issue 51, item 6: not 0.0.0.0/0 on 6379/6380, but geosvc-redis in the namespace
        and the one address overlays/production/redis-egress.yaml names; an address
        block wider than one host only on the web and mail ports."""
        policies = by_kind(namespace, "NetworkPolicy")
        named = policies["geosvc-egress-redis"]["spec"]["egress"][0]["to"]
        assert len(named) == 1, named
        assert named[0]["ipBlock"]["cidr"].endswith("/32"), named
        redis_peers = []
        for policy in policies.values():
            for rule in policy["spec"].get("egress", []):
                ports = {port.get("port") for port in rule.get("ports", [])} or {"every"}
                reaches_redis_ports = bool(ports & {6379, 6380, "every"})
                # a rule without `to` reaches every address: never on Redis's ports
                assert rule.get("to") or not reaches_redis_ports, (name_of(policy), rule)
                for peer in rule.get("to", []):
                    block = peer.get("ipBlock")
                    if block is not None and not block["cidr"].endswith(("/32", "/128")):
                        assert ports <= {443, 465, 587}, (name_of(policy), block, ports)
                    if ports & {6379, 6380}:
                        redis_peers.append(peer)
        in_namespace = {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "geosvc-redis"}}}
        assert len(redis_peers) == 2, redis_peers
        assert in_namespace in redis_peers
        assert named[0] in redis_peers


class TestSecretsPerWorkload:
    """Issue 51, item 6: each workload holds only the secrets its process reads, by the
    app's own list (app/kit/production.py), and still starts with them (TestProductionSettings)."""

    def test_each_container_takes_only_the_secrets_its_process_reads(
        self, namespace: list[Obj]
    ) -> None:
        example = env_file(SECRETS_EXAMPLE)
        seen = set()
        for where, container in geosvc_containers(namespace):
            process = process_of(container["args"])
            required, optional = secret_keys(container)
            assert required == SECRETS_READ_BY[process], where
            assert optional == OPTIONAL_SECRETS_READ_BY.get(process, frozenset()), where
            assert required <= set(example), where  # the Secret the operator makes has them
            seen.add(process)
        # every process, the backup included; the index build runs in `docker build`
        # (Dockerfile), no longer in a pod (issue 55, item 4)
        assert seen == set(SECRETS_READ_BY) - {"data"}

    def test_no_container_takes_the_whole_secret(self, namespace: list[Obj]) -> None:
        for obj in namespace:
            if (spec := pod_spec(obj)) is not None:
                for container, _ in containers(spec):
                    assert "*" not in secret_keys(container)[0], name_of(obj)

    def test_the_processes_that_hold_no_payment_or_signing_secret(
        self, namespace: list[Obj]
    ) -> None:
        """What the issue found in every pod: Flower, beat and the migration hold none."""
        sensitive = {"GEOSVC_STRIPE_SECRET_KEY", "GEOSVC_SECRET_PEPPER", "GEOSVC_OAUTH_SIGNING_KEY"}
        sensitive |= {"GEOSVC_SMTP_URL", "GEOSVC_STRIPE_WEBHOOK_SECRET"}
        example = env_file(SECRETS_EXAMPLE)
        for where, container in geosvc_containers(namespace):
            if process_of(container["args"]) in ("flower", "beat", "migrate", "data"):
                held = secret_keys(container)[0]
                held |= set(example) if "*" in held else set()  # the whole Secret
                assert not sensitive & held, where

    def test_a_process_given_too_few_secrets_is_refused(self, namespace: list[Obj]) -> None:
        """The list has teeth: the api without its Stripe key or Flower without Redis
        would not start, so a manifest that drops one fails TestProductionSettings."""
        secrets = env_file(SECRETS_EXAMPLE)
        found = {process_of(c["args"]): c for _, c in geosvc_containers(namespace)}
        for process, missing in (
            ("api", "GEOSVC_STRIPE_SECRET_KEY"),
            ("api", "GEOSVC_SECRET_PEPPER"),
            ("worker-billing", "GEOSVC_SMTP_URL"),
            ("flower", "GEOSVC_REDIS_URL"),
            ("migrate", "GEOSVC_DATABASE_URL"),
        ):
            env = container_env(found[process], namespace, secrets)
            del env[missing]
            refusals = process_refusals(env, found[process]["args"])
            assert any(missing in refusal for refusal in refusals), (process, refusals)


class TestProxy:
    """Issue 51, item 6: deploy/nginx.conf's limits in front of the api in the cluster: the
    same files (tests/test_proxy_kubernetes.py runs the rendered config with nginx)."""

    def test_the_configmap_holds_the_very_files_compose_mounts(self, namespace: list[Obj]) -> None:
        proxy = by_kind(namespace, "Deployment")["geosvc-proxy"]["spec"]["template"]["spec"]
        config_map = next(v["configMap"]["name"] for v in proxy["volumes"] if "configMap" in v)
        data = by_kind(namespace, "ConfigMap")[config_map]["data"]
        shared = ROOT.parent / "proxy"
        for name in ("nginx-limits.conf", "nginx-rate-limited.conf"):
            assert data[name] == (shared / name).read_text(), name
            assert f"include {name};" in data["nginx.conf"]
            assert f"include {name};" in (ROOT.parent / "nginx.conf").read_text()
        assert data["nginx.conf"] == (shared / "kubernetes.conf").read_text()
        container = proxy["containers"][0]
        mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] != "tmp")
        assert container["args"][container["args"].index("-c") + 1] == f"{mount}/nginx.conf"

    def test_it_trusts_the_forwarded_address_from_the_pod_range_only(
        self, namespace: list[Obj]
    ) -> None:
        """The client address every per-address limit keys on comes from X-Forwarded-For
        of the ingress controller's pods only: the range the api trusts the proxy in."""
        config = next(
            c["data"]["nginx.conf"]
            for c in by_kind(namespace, "ConfigMap").values()
            if "nginx.conf" in c.get("data", {})
        )
        trusted = [
            line.split()[1].rstrip(";")
            for line in config.splitlines()
            if line.strip().startswith("set_real_ip_from")
        ]
        api_config = next(
            c["data"] for c in by_kind(namespace, "ConfigMap").values() if "GEOSVC_ENV" in c["data"]
        )
        assert trusted == api_config["GEOSVC_FORWARDED_ALLOW_IPS"].split(",")
        assert "real_ip_recursive off;" in config  # the last address: the controller's own

    def test_the_ingress_sets_no_limits_of_its_own(self, namespace: list[Obj]) -> None:
        annotations = by_kind(namespace, "Ingress")["geosvc"]["metadata"]["annotations"]
        assert not [a for a in annotations if "limit" in a], annotations
