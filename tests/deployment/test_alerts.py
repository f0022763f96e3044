"""The Prometheus alert rules and the Grafana dashboard (issue 38, item 8): checked and
unit-tested offline with promtool (Debian's `prometheus` package, `make promtool`), and
written against the series the app really exports."""

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
# Series from outside the app: Prometheus's own, and the blackbox exporter's probe.
OTHER_SERIES = {"up", "probe_ssl_earliest_cert_expiry", "probe_success"}
SUFFIXES = ("_total", "_bucket", "_sum", "_count")


def promtool(*args: str, cwd: Path = DEPLOY) -> subprocess.CompletedProcess[str]:
    if PROMTOOL is None:
        if REQUIRE_SERVICES:
            pytest.fail("promtool is required (make promtool)")
        pytest.skip("promtool not installed (make promtool)")
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


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
    return {word for word in words if word.startswith(("geosvc_", "probe_")) or word == "up"}


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
