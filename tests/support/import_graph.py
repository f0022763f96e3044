"""app/'s import graph, every module counted (endpoints, deps, cli and imports inside
functions too; not the body of an `if TYPE_CHECKING:` block).

tests/test_layers.py asserts on it; run it to quote the figures:
`.venv/bin/python -m tests.support.import_graph` prints the modules, the package-level
graph's strongly connected groups and elementary cycles, and the same between modules.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

# An edge of the graph: which package (or module) imports which, and the module-level
# imports that make it (`"app.x.a -> app.y.b"`), to name them in a failure.
Graph = dict[str, dict[str, set[str]]]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_nodes(node: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import at any depth (inside functions too), but not the body of an
    `if TYPE_CHECKING:` block (its `else:` counts)."""
    found: list[ast.Import | ast.ImportFrom] = []
    children = list(ast.iter_child_nodes(node))
    if isinstance(node, ast.If) and _type_checking_only(node):
        children = list(node.orelse)
    for child in children:
        if isinstance(child, ast.Import | ast.ImportFrom):
            found.append(child)
        found.extend(import_nodes(child))
    return found


@functools.cache  # each file parsed once a test process: the layer tests read them all
def _imported_names(path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each import as (module, names taken from it): `import a.b` -> ("a.b", ()),
    `from .c import d` in package `a` -> ("a.c", ("d",))."""
    found: list[tuple[str, tuple[str, ...]]] = []
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    for node in import_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
            continue
        module = node.module
        if node.level:  # relative: resolved against this module's package
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join([*base, *([node.module] if node.module else [])])
        if module:
            found.append((module, tuple(alias.name for alias in node.names)))
    return tuple(found)


def imports_of(path: Path) -> set[str]:
    """The dotted names a module imports: `from a.b import c` gives `a.b` and `a.b.c`
    (c may be a module or a name in a.b)."""
    found: set[str] = set()
    for module, names in _imported_names(path):
        found.add(module)
        found.update(f"{module}.{name}" for name in names)
    return found


def app_modules() -> dict[str, set[str]]:
    """Every module under app/ (migrations' scripts too) and what it imports."""
    return {module_name(path): imports_of(path) for path in sorted((ROOT / "app").rglob("*.py"))}


def top_package(name: str) -> str:
    """`app.billing.service` -> `billing`; `app.kit.config` -> `config`."""
    return name.split(".")[1] if name.count(".") else name


def package_graph(modules: Mapping[str, set[str]]) -> Graph:
    """Which of app/'s top-level packages (a loose module is its own) imports which."""
    graph: Graph = {}
    for name, imported in modules.items():
        if name == "app":
            continue
        source = top_package(name)
        for target in (i for i in imported if i.startswith("app.")):
            if top_package(target) != source:
                graph.setdefault(source, {}).setdefault(top_package(target), set()).add(
                    f"{name} -> {target}"
                )
    return graph


def _owning_module(name: str, known: set[str]) -> str | None:
    """The module a dotted name is or lives in: `app.x.y.f` -> `app.x.y` when that is a
    module."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def module_graph() -> Graph:
    """Which module under app/ imports which. `from app.x import y` counts app.x.y when
    y is a module (app/x/__init__ then runs first, but importing its submodule needs
    nothing it defines), app.x otherwise."""
    paths = {module_name(path): path for path in sorted((ROOT / "app").rglob("*.py"))}
    known = set(paths)
    graph: Graph = {}
    for name, path in paths.items():
        for module, names in _imported_names(path):
            if not module.startswith("app"):
                continue
            targets = [f"{module}.{n}" if f"{module}.{n}" in known else module for n in names]
            for target in targets or [module]:
                owner = _owning_module(target, known)
                if owner and owner != name:
                    graph.setdefault(name, {}).setdefault(owner, set()).add(f"{name} -> {target}")
    return graph


def strongly_connected_groups(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """Tarjan's groups of more than one node (nodes that reach each other), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for following in sorted(graph.get(node, {})):
            if following not in index:
                visit(following)
                low[node] = min(low[node], low[following])
            elif following in on_stack:
                low[node] = min(low[node], index[following])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def import_cycles(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """Every elementary cycle, each once (starting from its smallest node). A cycle lies
    within one strongly connected group: the walk, exponential in the paths it follows,
    is kept inside those groups (none in a graph without cycles)."""
    cycles: list[list[str]] = []
    in_a_group = {node for group in strongly_connected_groups(graph) for node in group}

    def walk(start: str, path: list[str]) -> None:
        for following in sorted(graph.get(path[-1], {})):
            if following == start:
                cycles.append(list(path))
            elif following > start and following in in_a_group and following not in path:
                walk(start, [*path, following])

    for start in sorted(in_a_group):
        walk(start, [start])
    return cycles


def describe_cycles(graph: Graph, cycles: list[list[str]]) -> str:
    """Each cycle and the imports that make its arrows."""
    report = []
    for cycle in cycles:
        report.append(" -> ".join([*cycle, cycle[0]]))
        for source, target in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            report.extend(f"    {line}" for line in sorted(graph[source][target]))
    return "\n".join(report)


def summary() -> str:
    modules = app_modules()
    packages = package_graph(modules)
    between_modules = module_graph()
    package_names = {top_package(name) for name in modules} - {"app"}
    lines = [
        f"modules under app/: {len(modules)}",
        f"packages (a loose module counts as one): {len(package_names)}",
        f"package import arrows: {sum(len(targets) for targets in packages.values())}",
    ]
    for label, graph in (("package", packages), ("module", between_modules)):
        groups = strongly_connected_groups(graph)
        lines.append(f"{label}-level strongly connected groups: {len(groups)}")
        lines.extend(f"    {{{', '.join(group)}}}" for group in groups)
        lines.append(f"{label}-level elementary cycles: {len(import_cycles(graph))}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
