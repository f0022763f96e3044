"""The committed clients are what the generators make of today's OpenAPI document, and their
versions are the API's."""

from __future__ import annotations

import filecmp
import json
import re
import shutil
from pathlib import Path

import pytest

from clients import generate

CLIENTS = generate.CLIENTS


def differences(left: Path, right: Path) -> list[str]:
    """Files that differ or exist on one side only, relative to `left`."""
    found: list[str] = []
    compared = filecmp.dircmp(left, right, ignore=["__pycache__"])
    found += [str(Path(left, name)) for name in compared.left_only + compared.right_only]
    found += [str(Path(left, name)) for name in compared.diff_files]
    for name in compared.common_dirs:
        found += differences(left / name, right / name)
    return found


@pytest.mark.slow
def test_committed_clients_are_generated_from_todays_document(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm missing: the TypeScript generator comes from the npm registry")
    generate.generate(tmp_path)
    stale = [
        str(path)
        for path in (Path("openapi.json"), generate.TS_SCHEMA)
        if (tmp_path / path).read_text() != (CLIENTS / path).read_text()
    ]
    stale += differences(CLIENTS / generate.PYTHON_PACKAGE, tmp_path / generate.PYTHON_PACKAGE)
    assert not stale, f"stale client code (run `make clients`): {stale}"


def test_client_versions_follow_the_api() -> None:
    api = json.loads((CLIENTS / "openapi.json").read_text())["info"]["version"]
    python = CLIENTS / "python"
    typescript = CLIENTS / "typescript"
    found = {
        "pyproject": re.search(
            r'^version = "([^"]+)"', (python / "pyproject.toml").read_text(), re.M
        ),
        "__version__": re.search(
            r'^__version__ = "([^"]+)"',
            (python / "geosvc_client" / "_version.py").read_text(),
            re.M,
        ),
        "VERSION": re.search(
            r'^export const VERSION = "([^"]+)"',
            (typescript / "src" / "index.ts").read_text(),
            re.M,
        ),
    }
    versions = {name: match.group(1) if match else None for name, match in found.items()}
    versions["package.json"] = json.loads((typescript / "package.json").read_text())["version"]
    # a dated API version (2026-12-07) is the release 2026.12.7 in PEP 440 and semver alike
    dated = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", api)
    expected = ".".join(str(int(part)) for part in dated.groups()) if dated else api
    assert set(versions.values()) == {expected}, versions
