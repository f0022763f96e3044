"""The client libraries' README examples, run as written against a live server (the Python
client's retries of a real refusal: tests/v1/test_limits.py).

The Python examples run with this venv's interpreter (the client needs only httpx and attrs),
the TypeScript one is compiled by the pinned `tsc` and run by the machine's node.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.conftest import Stack
from tests.support.services import REQUIRE_SERVICES
from tests.v1.conftest import Client

ROOT = Path(__file__).resolve().parents[2]
PYTHON_CLIENT = ROOT / "clients" / "python"
TS_CLIENT = ROOT / "clients" / "typescript"

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("backend", ["postgres"], indirect=True)]


def readme_blocks(readme: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", readme.read_text(), flags=re.S)


def make_test_key(client: Client) -> str:
    created = client.control.post("/api-keys", json={"name": "ci", "env": "test"})
    assert created.status_code == 201, created.text
    return str(created.json()["plaintext"])


def run(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> str:
    completed = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_python_readme_examples_run(v1_stack: Stack, client: Client) -> None:
    calls, jobs = readme_blocks(PYTHON_CLIENT / "README.md", "python")
    env = {
        "PYTHONPATH": str(PYTHON_CLIENT),
        "GEOSVC_URL": v1_stack.server.url,
        "GEOSVC_API_KEY": make_test_key(client),
        "GEOSVC_LIVE_KEY": client.api_key,
    }
    lines = run([sys.executable, "-c", calls], env).splitlines()
    assert lines[0].startswith("Austin: 30.2"), lines
    assert lines[1] == "charged 1, state ok", lines  # a test key's call: its own counter
    assert re.fullmatch(r"ZIP 10001: \d{4,6} residents \(.+\)", lines[2]), lines
    assert lines[3] == "['FR', 'JP', 'PE']", lines
    assert lines[4] == "400 INVALID_ARGUMENT False", lines
    assert client.usage()["used"] == 0  # the test key left the live month untouched

    lines = run([sys.executable, "-c", jobs], env).splitlines()
    assert lines[0] == "completed 2 2", lines  # 2 rows with data, 2 credits
    assert all(re.fullmatch(r"\d+ None", line) for line in lines[1:3]), lines
    assert lines[3] in ("None NOT_FOUND", "None INVALID_ARGUMENT"), lines
    assert client.usage()["used"] == 2


def test_typescript_readme_example_runs(v1_stack: Stack, client: Client) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        if REQUIRE_SERVICES:
            pytest.fail("node and npm are needed for the TypeScript client (REQUIRE_SERVICES=1)")
        pytest.skip("node or npm missing")
    if not (TS_CLIENT / "node_modules" / ".bin" / "tsc").exists():
        run(["npm", "ci", "--no-audit", "--no-fund"], {}, cwd=TS_CLIENT)
    (example,) = readme_blocks(TS_CLIENT / "README.md", "ts")
    assert example == (TS_CLIENT / "examples" / "quickstart.ts").read_text()
    run([str(TS_CLIENT / "node_modules" / ".bin" / "tsc"), "-p", "."], {}, cwd=TS_CLIENT)
    env = {"GEOSVC_URL": v1_stack.server.url, "GEOSVC_API_KEY": make_test_key(client)}
    lines = run(["node", "dist/examples/quickstart.js"], env, cwd=TS_CLIENT).splitlines()
    assert lines[0].startswith("Austin: 30.2"), lines
    assert lines[1] == "charged 1, state ok", lines
    assert re.fullmatch(r"ZIP 10001: \d{4,6} residents \(.+\)", lines[2]), lines
    assert lines[3] == "[ 'FR', 'JP', 'PE' ]", lines
    assert lines[4] == "400 INVALID_ARGUMENT false", lines
