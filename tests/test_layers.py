"""Imports point down: edges -> features -> bottom; `app/` never imports `workers/`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BOTTOM = (
    "app.account_lock",
    "app.breaker",
    "app.clock",
    "app.config",
    "app.credentials",
    "app.db",
    "app.embedded_redis",
    "app.errors",
    "app.ids",
    "app.json_text",
    "app.migrations",
    "app.models",
    "app.queue",
    "app.per_settings",
    "app.principal",
    "app.plans",
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


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import at any depth (inside functions too), but not the body of an
    `if TYPE_CHECKING:` block (its `else:` counts)."""
    found: list[ast.Import | ast.ImportFrom] = []
    children = list(ast.iter_child_nodes(node))
    if isinstance(node, ast.If) and _type_checking_only(node):
        children = list(node.orelse)
    for child in children:
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        found.extend(_import_nodes(child))
    return found


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    for node in _import_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        module = node.module
        if node.level:  # relative: resolved against this module's package
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join([*base, *([node.module] if node.module else [])])
        if module:
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
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


def top_package(name: str) -> str:
    """`app.billing.service` -> `billing`; `app.config` -> `config`."""
    return name.split(".")[1] if name.count(".") else name


def package_graph() -> dict[str, dict[str, set[str]]]:
    """Which of app/'s top-level packages imports which, with the modules that do it.

    Modules named like edge code (`endpoints`, `deps`, `cli`) are left out: they are the
    HTTP and command-line edge of their feature and sit above every feature.
    """
    graph: dict[str, dict[str, set[str]]] = {}
    for name, imported in app_modules().items():
        if name == "app" or name.rsplit(".", 1)[-1] in EDGE_MODULE_NAMES:
            continue
        source = top_package(name)
        for target in (i for i in imported if i.startswith("app.")):
            if top_package(target) != source:
                graph.setdefault(source, {}).setdefault(top_package(target), set()).add(
                    f"{name} -> {target}"
                )
    return graph


def import_cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Every elementary cycle, each once (starting from its smallest package)."""
    cycles: list[list[str]] = []

    def walk(start: str, path: list[str]) -> None:
        for following in sorted(graph.get(path[-1], {})):
            if following == start:
                cycles.append(list(path))
            elif following > start and following not in path:
                walk(start, [*path, following])

    for start in sorted(graph):
        walk(start, [start])
    return cycles


def test_no_two_packages_import_each_other_in_a_cycle() -> None:
    graph = package_graph()
    found = import_cycles(graph)
    report = []
    for cycle in found:
        report.append(" -> ".join([*cycle, cycle[0]]))
        for source, target in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            report.extend(f"    {line}" for line in sorted(graph[source][target]))
    assert found == [], f"{len(found)} import cycles between app/'s packages:\n" + "\n".join(report)


def test_the_cycle_finder_sees_a_cycle() -> None:
    graph = {"a": {"b": {"x"}}, "b": {"c": {"y"}}, "c": {"a": {"z"}, "b": {"w"}}}
    assert import_cycles(graph) == [["a", "b", "c"], ["b", "c"]]


def test_imports_inside_functions_count_and_type_checking_ones_do_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import app.hidden\nelse:\n    import app.shown\n"
        "def f() -> None:\n    from app.inner import x\n"
    )
    tree_imports = {
        n.module if isinstance(n, ast.ImportFrom) else n.names[0].name
        for n in _import_nodes(ast.parse(source))
    }
    assert tree_imports == {"typing", "app.shown", "app.inner"}


def test_a_worker_process_needs_no_web_framework() -> None:
    probe = "import sys, workers; print(sorted({'fastapi', 'starlette', 'mcp'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
