"""A tool is one unit (docs/CONTRIBUTING.md, "Adding a tool"): its folder
`app/geodata/tools/<tool>/` holds its spec, models, embedded and upstream answers and
examples, and outside it the tool's name is in few files; an eighth tool is its folder
plus one catalogue line, and shows up in tools/list, /v1 and OpenAPI with nothing else
changed. Needs no server (the fast tier)."""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.geodata.catalogue import TOOL_SPECS
from tests.support.import_graph import ROOT

APP = ROOT / "app"
# Outside its folder a tool's name may be in the catalogue's line, app/kit/config.py's
# UpstreamTool (config imports no feature) and the shared machinery that builds its result.
MAX_FILES_OUTSIDE_ITS_FOLDER = 4


def folder_of(name: str) -> Path:
    return APP.joinpath(*TOOL_SPECS[name].package.split(".")[1:])


def names_in(path: Path, names: set[str]) -> set[str]:
    """The tool names a module spells: a string constant equal to one, or a module path
    with one as a part (`app.geodata.tools.geocode.schemas`, `from ... import geocode`,
    the module's own path)."""
    own = path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)
    return (set(own.with_suffix("").parts) | _spelled(path)) & names


@functools.cache  # each file parsed once a test process, not once a tool
def _spelled(path: Path) -> frozenset[str]:
    """Every string constant and every part of an imported module path in a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
        elif isinstance(node, ast.Import):
            found.update(part for alias in node.names for part in alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            found.update((node.module or "").split("."))
            found.update(alias.name for alias in node.names)
    return frozenset(found)


def files_naming(name: str) -> list[str]:
    """Files under app/ outside the tool's own folder that name it."""
    folder = folder_of(name)
    return sorted(
        str(path.relative_to(ROOT))
        for path in APP.rglob("*.py")
        if not path.is_relative_to(folder) and name in names_in(path, {name})
    )


@pytest.mark.parametrize("name", list(TOOL_SPECS))
def test_each_tool_is_a_folder_with_its_parts(name: str) -> None:
    spec = TOOL_SPECS[name]
    folder = folder_of(name)
    assert (folder / "__init__.py").is_file(), f"{name}: no folder {folder}"
    parts = {path.stem for path in folder.glob("*.py")}
    assert {"__init__", "schemas", "embedded"} <= parts, (name, parts)
    assert ("upstream" in parts) == spec.upstream_capable, (name, parts)
    assert spec.args_model.__module__ == spec.result_model.__module__ == f"{spec.package}.schemas"


@pytest.mark.parametrize("name", list(TOOL_SPECS))
def test_outside_its_folder_few_files_name_the_tool(name: str) -> None:
    files = files_naming(name)
    assert len(files) <= MAX_FILES_OUTSIDE_ITS_FOLDER, (
        f"{name} is named (a string or a module) in {len(files)} files outside its folder, "
        f"more than {MAX_FILES_OUTSIDE_ITS_FOLDER}: {files}"
    )


def test_the_counter_sees_strings_and_module_paths(tmp_path: Path) -> None:
    module = tmp_path / "reverse_geocode.py"
    module.write_text(
        "from app.geodata.tools.geocode.schemas import GeocodeArgs\n"
        "from app.geodata.tools import static_map\n"
        "X = 'search_nearby'\nY = 'a geocode in prose'\n"
    )
    names = {"geocode", "static_map", "search_nearby", "reverse_geocode"}
    assert names_in(module, names | {"get_population"}) == names


# An eighth tool, written as a folder outside app/ and added to the catalogue in a child
# process the way the catalogue's one line adds it: the MCP listing, the /v1 routes and
# OpenAPI pick it up, and it answers through its folder's embedded module.
EIGHTH_TOOL = {
    "__init__.py": """
        from typing import Any

        from app.geodata.tools.common import CREDIT
        from app.geodata.tools.spec import Example, ToolSpec
        from eighth_tool.schemas import AntipodeArgs, AntipodeResult


        def summary(result: dict[str, Any]) -> str:
            return f"The antipode is ({result['lat']}, {result['lon']})."


        SPEC = ToolSpec(
            "antipode",
            "The point opposite",
            "The point on the other side of the Earth." + CREDIT,
            AntipodeArgs,
            AntipodeResult,
            __name__,
            summary,
            "/v1/antipode",
            Example({"lat": 10, "lon": 20}, {"lat": -10, "lon": -160, "source": "arithmetic"}),
            coverage=("every point", "none"),
            upstream_capable=False,
        )
    """,
    "schemas.py": """
        from pydantic import Field

        from app.geodata.results import Result
        from app.geodata.schemas import PointArgs


        class AntipodeArgs(PointArgs):
            pass


        class AntipodeResult(Result):
            lat: float = Field(description="Latitude")
            lon: float = Field(description="Longitude")
            source: str = Field(description="Credit to show")
    """,
    "embedded.py": """
        from typing import Any

        from eighth_tool.schemas import AntipodeArgs, AntipodeResult


        def answer(provider: Any, args: AntipodeArgs) -> AntipodeResult:
            lon = args.lon - 180 if args.lon > 0 else args.lon + 180
            return AntipodeResult(lat=-args.lat, lon=lon, source="arithmetic")
    """,
}
PROBE = """
import json, sys
from pathlib import Path
from app.geodata import catalogue, service
import eighth_tool

catalogue.TOOL_SPECS[eighth_tool.SPEC.name] = eighth_tool.SPEC  # the catalogue's one line

from app.kit.config import Settings
from app.mcp.server import tool_definition
from app.v1.openapi import openapi_document
from app.v1.routes import ROUTES

service.configure(Path(sys.argv[1]))
settings = Settings()
listed = [tool_definition(spec, settings).name for spec in catalogue.TOOL_SPECS.values()]
print(json.dumps({
    "listed": listed,
    "size": len(tool_definition(eighth_tool.SPEC, settings).model_dump_json(by_alias=True,
        exclude_none=True)),
    "routes": [route.path for route in ROUTES],
    "openapi": sorted(openapi_document(settings)["paths"]),
    "answer": service.execute("antipode", {"lat": 10, "lon": 20}).structured,
    "summary": catalogue.summarize("antipode", {"lat": -10, "lon": -160}),
}))
"""


def test_an_eighth_tool_is_its_folder_plus_one_catalogue_line(
    tmp_path: Path, geodata_dir: Path
) -> None:
    folder = tmp_path / "eighth_tool"
    folder.mkdir()
    for name, text in EIGHTH_TOOL.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(geodata_dir)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{tmp_path}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    assert seen["listed"] == [*TOOL_SPECS, "antipode"]
    assert seen["size"] < 3_500
    assert "/v1/antipode" in seen["routes"]
    assert "/v1/antipode" in seen["openapi"]
    assert seen["answer"] == {"lat": -10.0, "lon": -160.0, "source": "arithmetic"}
    assert seen["summary"] == "The antipode is (-10, -160)."
