"""Imports point down: edges -> features -> bottom; `app/` never imports `workers/`."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

from tests.support.import_graph import (
    ROOT,
    app_modules,
    describe_cycles,
    import_cycles,
    import_nodes,
    module_graph,
    package_graph,
    strongly_connected_groups,
)

BOTTOM = (
    "app.kit",  # settings, database, errors, ids, clocks, Redis: the small pieces
    "app.deps",  # request dependencies: the session, the signed-in user (below the features)
    "app.migrations",
    "app.models",
    "app.account_lock",
    "app.plans",
    "app.runtime",
    "app.queue",
)
EDGES = ("app.main", "app.cli", "app.devserver", "app.http", "app.mcp", "app.v1", "app.dashboard")
# HTTP endpoints and commands live in their feature's folder but are edge code: no feature
# imports them. They count in the package graph all the same (below).
EDGE_MODULE_NAMES = ("endpoints", "cli")


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def is_edge(name: str) -> bool:
    return within(name, EDGES) or name.rsplit(".", 1)[-1] in EDGE_MODULE_NAMES


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


def test_no_two_packages_import_each_other_in_a_cycle() -> None:
    """Every module counts, the edge modules in a feature's folder (endpoints, cli) and
    imports inside functions too: a feature's endpoints take the signed-in user from
    app.deps, never from another feature."""
    graph = package_graph(app_modules())
    found = import_cycles(graph)
    assert found == [], f"{len(found)} import cycles between app/'s packages:\n" + describe_cycles(
        graph, found
    )


def test_no_two_modules_import_each_other_in_a_cycle() -> None:
    """Nor between modules, a loop hidden by an import inside a function included."""
    graph = module_graph()
    found = import_cycles(graph)
    assert found == [], f"{len(found)} import cycles between app/'s modules:\n" + describe_cycles(
        graph, found
    )


def test_request_dependencies_live_in_one_package() -> None:
    elsewhere = [name for name in app_modules() if name.endswith(".deps") and name != "app.deps"]
    assert elsewhere == []


def test_the_design_map_lists_every_package_and_module_of_app() -> None:
    design = (ROOT / "docs" / "DESIGN.md").read_text()
    layout = design.split("## Layout", 1)[1].split("```", 2)[1]
    top_level = {
        path.name
        for path in (ROOT / "app").iterdir()
        if (path.is_dir() and any(path.glob("*.py")))
        or (path.suffix == ".py" and path.name != "__init__.py")
    }
    missing = sorted(name for name in top_level if not re.search(rf"\b{re.escape(name)}\b", layout))
    assert missing == [], f"docs/DESIGN.md's layout map does not name {missing}"


def test_the_cycle_finder_sees_a_cycle() -> None:
    graph = {"a": {"b": {"x"}}, "b": {"c": {"y"}}, "c": {"a": {"z"}, "b": {"w"}}, "d": {"a": {"v"}}}
    assert import_cycles(graph) == [["a", "b", "c"], ["b", "c"]]
    assert strongly_connected_groups(graph) == [["a", "b", "c"]]


def test_imports_inside_functions_count_and_type_checking_ones_do_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import app.hidden\nelse:\n    import app.shown\n"
        "def f() -> None:\n    from app.inner import x\n"
    )
    tree_imports = {
        n.module if isinstance(n, ast.ImportFrom) else n.names[0].name
        for n in import_nodes(ast.parse(source))
    }
    assert tree_imports == {"typing", "app.shown", "app.inner"}


def test_a_worker_process_needs_no_web_framework() -> None:
    probe = "import sys, workers; print(sorted({'fastapi', 'starlette', 'mcp'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
