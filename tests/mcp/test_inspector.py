"""The MCP Inspector CLI (a real third-party client, in Node) lists and calls our tools
with the bearer header. Needs node and npm; CI (REQUIRE_SERVICES=1) fails without them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.mcp.conftest import Account, Stack
from tests.support.services import REQUIRE_SERVICES

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INSTALL_DIR = Path(__file__).resolve().parents[2] / ".cache" / "inspector"


@pytest.fixture(scope="session")
def inspector() -> Path:
    if shutil.which("npm") is None:
        if REQUIRE_SERVICES:
            pytest.fail("npm is needed for the MCP Inspector test (REQUIRE_SERVICES=1)")
        pytest.skip("npm is not installed")
    binary = INSTALL_DIR / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        INSTALL_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(INSTALL_DIR), INSPECTOR],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return binary


def run_cli(inspector: Path, stack: Stack, api_key: str, *args: str) -> dict:
    completed = subprocess.run(
        [
            str(inspector),
            "--cli",
            stack.mcp_url,
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {api_key}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 0, completed.stderr + completed.stdout
    return dict(json.loads(completed.stdout))


def test_inspector_lists_and_calls_tools(inspector: Path, stack: Stack, account: Account) -> None:
    listed = run_cli(inspector, stack, account.api_key, "--method", "tools/list")
    called = run_cli(
        inspector,
        stack,
        account.api_key,
        "--method",
        "tools/call",
        "--tool-name",
        "get_population",
        "--tool-args-json",
        '{"postal_code": "94103"}',
    )

    assert len(listed["tools"]) == 6
    assert called["isError"] is False
    assert called["structuredContent"]["postalCode"] == "94103"
    assert called["structuredContent"]["population"] > 0
    assert account.http.get("/usage").json()["used"] == 1
