"""The public contract as names: every operation, parameter, status and field of the HTTP
API's OpenAPI document, and every field of the MCP tools' input and output schemas
(tools/list), one string each (`GET /v1/geocode ?query`, `GeocodeResult.results[].label`,
`tool geocode input.query`). tests/contract/test_api_changelog.py compares them with the
baseline in tests/contract/api_baseline.json and docs/API_CHANGELOG.md's entries.

`.venv/bin/python -m tests.support.api_contract` prints what changed since the baseline;
`--write NEXT_VERSION` takes the current names as a new baseline, holding every change
before NEXT_VERSION (the changelog's sections before it are then history only).
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "tests" / "contract" / "api_baseline.json"
CHANGELOG = ROOT / "docs" / "API_CHANGELOG.md"
_ENTRY = re.compile(r"^\s*[-*]\s+(Added|Removed|Renamed)\b(.*)$")
_NAME = re.compile(r"`([^`]+)`")
_SECTION = re.compile(r"^##\s+(Unreleased|[0-9]{4}-[0-9]{2}-[0-9]{2})\b")


def schema_names(prefix: str, schema: Any) -> set[str]:
    """Each property under `schema` as `prefix.name` (`[]` for a list's items); branches
    (anyOf, oneOf, allOf) under the same prefix; references are named where they point."""
    if not isinstance(schema, dict):
        return set()
    names: set[str] = set()
    for name, sub in schema.get("properties", {}).items():
        names.add(f"{prefix}.{name}")
        names |= schema_names(f"{prefix}.{name}", sub)
    names |= schema_names(f"{prefix}[]", schema.get("items"))
    for keyword in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(keyword, []):
            names |= schema_names(prefix, branch)
    return names


def openapi_names(document: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            names.add(where)
            for parameter in operation.get("parameters", []):
                names.add(f"{where} ?{parameter['name']}")
            for content in operation.get("requestBody", {}).get("content", {}).values():
                names |= schema_names(f"{where} body", content.get("schema"))
            for status, response in operation.get("responses", {}).items():
                names.add(f"{where} {status}")
                for content in response.get("content", {}).values():
                    names |= schema_names(f"{where} {status}", content.get("schema"))
    components = document.get("components", {})
    for name, schema in components.get("schemas", {}).items():
        names.add(name)
        names |= schema_names(name, schema)
    names |= {f"header {name}" for name in components.get("headers", {})}
    return names


def tool_names(tools: list[dict[str, Any]]) -> set[str]:
    names: set[str] = set()
    for tool in tools:
        where = f"tool {tool['name']}"
        names.add(where)
        for part in ("inputSchema", "outputSchema"):
            schema = tool.get(part) or {}
            label = f"{where} {part.removesuffix('Schema')}"
            names |= schema_names(label, schema)
            for name, definition in schema.get("$defs", {}).items():
                names |= schema_names(f"{label} $defs.{name}", definition)
    return names


def current_names() -> set[str]:
    from app.geodata.catalogue import TOOL_SPECS
    from app.kit.config import get_settings
    from app.mcp.server import tool_definition
    from app.v1.openapi import openapi_document

    settings = get_settings()
    tools = [
        tool_definition(spec, settings).model_dump(mode="json", by_alias=True, exclude_none=True)
        for spec in TOOL_SPECS.values()
    ]
    return openapi_names(openapi_document(settings)) | tool_names(tools)


@dataclass(frozen=True)
class Entries:
    added: list[str]  # patterns (`*` matches any run of characters)
    removed: list[str]


def changelog_entries(text: str, since: str) -> Entries:
    """The names an `Added`, `Removed` or `Renamed `old` to `new`` line mentions, in the
    sections of version `since` and later (`## 2026-12-07`, `## Unreleased`): the older
    ones are folded into the baseline."""
    added: list[str] = []
    removed: list[str] = []
    counted = False
    for line in text.splitlines():
        heading = _SECTION.match(line)
        if heading is not None:
            counted = heading.group(1) == "Unreleased" or heading.group(1) >= since
            continue
        match = _ENTRY.match(line)
        if match is None or not counted:
            continue
        kind, names = match.group(1), _NAME.findall(match.group(2))
        if kind == "Added":
            added += names
        elif kind == "Removed":
            removed += names
        elif len(names) >= 2:  # Renamed `old` to `new`
            removed.append(names[0])
            added.append(names[1])
    return Entries(added, removed)


@dataclass(frozen=True)
class Drift:
    unlogged_added: list[str]
    unlogged_removed: list[str]
    stale: list[str]  # entries that name no change

    @property
    def problems(self) -> list[str]:
        return [
            *(f"added without a changelog entry: `{n}`" for n in self.unlogged_added),
            *(
                f"removed or renamed without a changelog entry: `{n}`"
                for n in self.unlogged_removed
            ),
            *(f"changelog entry names no change since the baseline: `{n}`" for n in self.stale),
        ]


def drift(baseline: set[str], current: set[str], entries: Entries) -> Drift:
    """What changed since `baseline` that `entries` do not log, and entries that log
    nothing (a name already there, or gone already)."""
    added, removed = sorted(current - baseline), sorted(baseline - current)

    def logged(name: str, patterns: list[str]) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)

    stale = [p for p in entries.added if not any(fnmatch.fnmatchcase(n, p) for n in added)]
    stale += [p for p in entries.removed if not any(fnmatch.fnmatchcase(n, p) for n in removed)]
    return Drift(
        unlogged_added=[n for n in added if not logged(n, entries.added)],
        unlogged_removed=[n for n in removed if not logged(n, entries.removed)],
        stale=stale,
    )


def read_baseline() -> tuple[str, set[str]]:
    """(the first version whose changes it does not hold, its names)"""
    taken = json.loads(BASELINE.read_text())
    return taken["before"], set(taken["names"])


def main(argv: list[str]) -> int:
    current = current_names()
    if "--write" in argv:  # --write YYYY-MM-DD: the version whose changes it does not hold
        before = argv[argv.index("--write") + 1]
        taken = {"before": before, "names": sorted(current)}
        BASELINE.write_text(json.dumps(taken, indent=0, ensure_ascii=False) + "\n")
        print(f"{BASELINE.relative_to(ROOT)}: {len(current)} names")
        return 0
    before, baseline = read_baseline()
    found = drift(baseline, current, changelog_entries(CHANGELOG.read_text(), before))
    print("\n".join(found.problems) or "the changelog names every change since the baseline")
    return 1 if found.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
