"""The Prometheus alert rules and the Grafana dashboard (issue 38, item 8): checked and
unit-tested offline with promtool (Debian's `prometheus` package, `make promtool`), and
written against the series the app really exports. The Alertmanager configuration that
routes them to a person (issue 55, item 2): checked with amtool (Debian's
`prometheus-alertmanager`, `make amtool`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs

from tests.support.services import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROMTOOL = shutil.which("promtool")
AMTOOL = shutil.which("amtool")
# Series from outside the app: Prometheus's own, the blackbox exporter's probe, the
# database volume's free space (node-exporter in compose, the kubelet in Kubernetes).
OTHER_SERIES = {
    "up",
    "probe_ssl_earliest_cert_expiry",
    "probe_success",
    "node_filesystem_avail_bytes",
    "node_filesystem_size_bytes",
    "kubelet_volume_stats_available_bytes",
    "kubelet_volume_stats_capacity_bytes",
}
SUFFIXES = ("_total", "_bucket", "_sum", "_count")


def promtool(*args: str, cwd: Path = DEPLOY) -> subprocess.CompletedProcess[str]:
    if PROMTOOL is None:
        if REQUIRE_SERVICES:
            pytest.fail("promtool is required (make promtool)")
        pytest.skip("promtool not installed (make promtool)")
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def amtool(*args: str) -> subprocess.CompletedProcess[str]:
    if AMTOOL is None:
        if REQUIRE_SERVICES:
            pytest.fail("amtool is required (make amtool)")
        pytest.skip("amtool not installed (make amtool)")
    return subprocess.run([AMTOOL, *args], cwd=DEPLOY, capture_output=True, text=True, timeout=60)


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def dashboard_exprs() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana" / "geosvc.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def exported_series() -> set[str]:
    """Every `geosvc_*` name app/observability defines (counters gain _total, histograms
    _bucket, _sum and _count in the exposition)."""
    names: set[str] = set()
    for path in (ROOT / "app" / "observability").glob("*.py"):
        names.update(re.findall(r'"(geosvc_[a-z_]+)"', path.read_text()))
    return names


def series_in(expr: str) -> set[str]:
    """The series names an expression reads (label matchers and strings left out)."""
    bare = re.sub(r"\{[^}]*\}|\"[^\"]*\"", "", expr)
    words = set(re.findall(r"\b[a-z_][a-z0-9_]*\b", bare))
    return {w for w in words if w.startswith(("geosvc_", "probe_")) or w in OTHER_SERIES}


def known(series: str, exported: set[str]) -> bool:
    if series in OTHER_SERIES or series in exported:
        return True
    return any(
        series.endswith(suffix) and series[: -len(suffix)] in exported for suffix in SUFFIXES
    )


class TestAlertRules:
    def test_promtool_checks_them(self) -> None:
        result = promtool("check", "rules", "alerts.yml")
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"SUCCESS: {len(alert_rules())} rules found" in result.stdout

    def test_promtool_unit_tests_pass(self) -> None:
        result = promtool("test", "rules", "alerts.test.yml")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout

    def test_every_alert_is_unit_tested_firing(self) -> None:
        tests = yaml.safe_load((DEPLOY / "alerts.test.yml").read_text())["tests"]
        fired = {
            case["alertname"]
            for test in tests
            for case in test.get("alert_rule_test", [])
            if case["exp_alerts"]
        }
        assert {rule["alert"] for rule in alert_rules()} - fired == set()

    def test_prometheus_yml_loads_them(self, tmp_path: Path) -> None:
        """`promtool check config` on prometheus.yml, with the paths compose mounts made
        local (the rules file, the token file)."""
        token = tmp_path / "metrics_token"
        token.write_text("token")
        config = (ROOT / "prometheus.yml").read_text()
        config = config.replace("/etc/prometheus/alerts.yml", str(DEPLOY / "alerts.yml"))
        config = config.replace("/run/secrets/metrics_token", str(token))
        (tmp_path / "prometheus.yml").write_text(config)
        result = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr

    def test_they_read_only_series_that_exist(self) -> None:
        exported = exported_series()
        for rule in alert_rules():
            used = series_in(rule["expr"])
            assert used, rule["alert"]
            assert {name for name in used if not known(name, exported)} == set(), rule["alert"]

    def test_every_alert_has_a_severity_and_a_runbook_entry(self) -> None:
        operations = (ROOT / "docs" / "OPERATIONS.md").read_text()
        anchors = {
            re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
            for heading in re.findall(r"^#{2,3} (.+)$", operations, flags=re.M)
        }
        for rule in alert_rules():
            assert rule["labels"]["severity"] in ("page", "ticket"), rule["alert"]
            runbook = rule["annotations"]["runbook"]
            assert runbook.split("#")[1] in anchors, (rule["alert"], runbook)


class TestAlertmanager:
    """deploy/alertmanager.yml: valid, a page goes to the paging receiver and a ticket to
    the ticket one, and its inhibitions name alerts that exist."""

    def test_amtool_checks_it(self) -> None:
        result = amtool("check-config", "alertmanager.yml")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout

    @pytest.mark.parametrize(
        ("labels", "receiver"),
        [
            (("severity=page", "alertname=GeosvcDatabaseUnreachable"), "page"),
            (("severity=ticket", "alertname=GeosvcBackupTooOld"), "ticket"),
            (("alertname=SomethingWithoutASeverity",), "ticket"),
        ],
    )
    def test_it_routes_each_severity_to_its_receiver(
        self, labels: tuple[str, ...], receiver: str
    ) -> None:
        result = amtool("config", "routes", "test", "--config.file=alertmanager.yml", *labels)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.split() == [receiver]

    def test_every_severity_of_the_rules_has_a_route(self) -> None:
        config = yaml.safe_load((DEPLOY / "alertmanager.yml").read_text())
        routed = {route["matchers"][0] for route in config["route"]["routes"]}
        severities = {rule["labels"]["severity"] for rule in alert_rules()}
        assert {f'severity="{severity}"' for severity in severities} <= routed

    def test_its_inhibitions_name_alerts_that_exist(self) -> None:
        """A cause and its symptoms by name: a renamed alert would silently stop muting."""
        config = yaml.safe_load((DEPLOY / "alertmanager.yml").read_text())
        alerts = {rule["alert"] for rule in alert_rules()}
        for rule in config["inhibit_rules"]:
            for matcher in (*rule["source_matchers"], *rule["target_matchers"]):
                names = re.fullmatch(r'alertname=~?"([^"]+)"', matcher)
                assert names is not None, matcher
                assert set(names.group(1).split("|")) <= alerts, matcher
            # one cause per rule
            sources = rule["source_matchers"][0].split('"')[1].split("|")
            assert len(sources) == 1
            assert sources[0] in alerts

    def test_prometheus_sends_its_alerts_there(self) -> None:
        config = yaml.safe_load((ROOT / "prometheus.yml").read_text())
        targets = config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"]
        assert targets == ["alertmanager:9093"]


class TestDashboard:
    def test_its_queries_parse(self, tmp_path: Path) -> None:
        """Each panel's query as a recording rule, which promtool parses (Grafana's
        $__rate_interval as a plain range)."""
        rules = [
            {"record": f"dashboard:panel_{n}", "expr": expr.replace("$__rate_interval", "5m")}
            for n, expr in enumerate(dashboard_exprs())
        ]
        (tmp_path / "dashboard.yml").write_text(
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]})
        )
        result = promtool("check", "rules", "dashboard.yml", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr

    def test_it_reads_only_series_that_exist_and_shows_every_one(self) -> None:
        exported = exported_series()
        used = set().union(*(series_in(expr) for expr in dashboard_exprs()))
        assert {name for name in used if not known(name, exported)} == set()
        shown = {re.sub(r"_(total|bucket|sum|count)$", "", name) for name in used}
        assert exported - {"geosvc_request_id"} - shown == set()
