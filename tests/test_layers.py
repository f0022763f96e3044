"""Imports point down: edges -> features -> bottom; `app/` never imports `workers/`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BOTTOM = (
    "app.breaker",
    "app.clock",
    "app.config",
    "app.credentials",
    "app.db",
    "app.embedded_redis",
    "app.errors",
    "app.ids",
    "app.migrations",
    "app.models",
    "app.queue",
    "app.per_settings",
    "app.production",
    "app.redis_client",
    "app.runtime",
    "app.ttl_cache",
    "app.validation",
)
EDGES = ("app.main", "app.cli", "app.devserver", "app.http", "app.mcp", "app.v1", "app.dashboard")
# HTTP endpoints and their dependencies live in their feature's folder but are edge code.
EDGE_MODULE_NAMES = ("endpoints", "deps", "cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def is_edge(name: str) -> bool:
    return within(name, EDGES) or name.rsplit(".", 1)[-1] in EDGE_MODULE_NAMES


def app_modules() -> dict[str, set[str]]:
    return {module_name(path): imports_of(path) for path in sorted((ROOT / "app").rglob("*.py"))}


def test_app_never_imports_workers() -> None:
    offenders = {
        name: sorted(i for i in imported if within(i, ("workers", "beat_schedule")))
        for name, imported in app_modules().items()
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_bottom_layer_imports_no_feature_and_no_edge() -> None:
    offenders = {
        name: sorted(i for i in imported if i.startswith("app.") and not within(i, BOTTOM))
        for name, imported in app_modules().items()
        if within(name, BOTTOM)
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_features_import_no_edge() -> None:
    offenders = {
        name: sorted(i for i in imported if i.startswith("app.") and is_edge(i))
        for name, imported in app_modules().items()
        if not within(name, BOTTOM) and not is_edge(name)
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_a_worker_process_needs_no_web_framework() -> None:
    probe = "import sys, workers; print(sorted({'fastapi', 'starlette', 'mcp'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
