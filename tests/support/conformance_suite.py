"""The MCP conformance suite (`@modelcontextprotocol/conformance`) and the Node 22 it needs.

Both come from the npm registry into .cache/conformance (no global install, no download
outside a registry): the suite pinned twice under npm aliases, the latest release for the
2025 protocol revisions and the pre-release that also covers 2026-07-28, and Node 22 as
the `node-linux-<arch>` package, which carries the official binary (the machine's own
`node` is used instead when it is 22 or newer). `make conformance-tools` installs them;
the test installs them too when they are missing.

The suite has no option to send a header, so our API key is added by a local proxy
(tests/support/header_proxy.py). By hand, against `make run` and a key of yours:

    GEOSVC_API_KEY=svc_live_ak_... .venv/bin/python -m tests.support.conformance_suite \\
        --url http://127.0.0.1:8000/mcp

prints the scenarios of both suites, each with its passed and failed checks.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.header_proxy import HeaderProxy

INSTALL_DIR = Path(__file__).resolve().parents[2] / ".cache" / "conformance"
NODE_MAJOR = 22
NODE_VERSION = "22.23.3"
# npm alias -> the suite's version; each runs every server scenario it has ("--suite all").
SUITES = {
    "conformance-stable": "0.1.16",
    "conformance-draft": "0.2.0-alpha.12",
}
ARCHITECTURES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
INSTALL_TIMEOUT_S = 300


class NodeUnavailable(RuntimeError):
    """No Node 22 here, and npm is missing to install one."""


def _major(node: str) -> int:
    completed = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    match = re.match(r"v(\d+)\.", completed.stdout.strip())
    return int(match.group(1)) if match else 0


def _node_package() -> str:
    system = platform.system().lower()
    arch = ARCHITECTURES.get(platform.machine().lower())
    if system != "linux" or arch is None:
        raise NodeUnavailable(
            f"no Node {NODE_MAJOR} package for {platform.system()} {platform.machine()}: "
            f"put a node {NODE_MAJOR} or newer on PATH"
        )
    return f"node-{system}-{arch}@{NODE_VERSION}"


def _system_node() -> str | None:
    node = shutil.which("node")
    return node if node is not None and _major(node) >= NODE_MAJOR else None


def _installed_node() -> Path:
    return INSTALL_DIR / "node_modules" / ".bin" / "node"


def _suite_entry(alias: str) -> Path:
    return INSTALL_DIR / "node_modules" / alias / "dist" / "index.js"


def _installed_version(alias: str) -> str | None:
    manifest = INSTALL_DIR / "node_modules" / alias / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.exists() else None


def _missing() -> list[str]:
    """The npm packages still to install."""
    packages = [
        f"{alias}@npm:@modelcontextprotocol/conformance@{version}"
        for alias, version in SUITES.items()
        if _installed_version(alias) != version
    ]
    if not _installed_node().exists() and _system_node() is None:
        packages.append(_node_package())
    return packages


def install() -> None:
    """Install the pinned suites, and Node 22 unless the machine has it (idempotent)."""
    missing = _missing()
    if not missing:
        return
    if shutil.which("npm") is None:
        raise NodeUnavailable("npm is needed to install the conformance suite and Node 22")
    INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(INSTALL_DIR), *missing],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"npm install failed:\n{completed.stderr[-4000:]}")


def node() -> str:
    """A Node of version 22 or newer: the machine's, or the one `install` put in .cache."""
    system_node = _system_node()
    if system_node is not None:
        return system_node
    installed = _installed_node()
    if installed.exists() and _major(str(installed)) >= NODE_MAJOR:
        return str(installed)
    raise NodeUnavailable(f"Node {NODE_MAJOR} is not installed: run `make conformance-tools`")


@dataclass
class Check:
    id: str
    status: str  # SUCCESS, FAILURE, WARNING, SKIPPED, INFO
    message: str
    details: dict[str, Any]


@dataclass
class Scenario:
    name: str
    checks: list[Check] = field(default_factory=list)

    def failed(self) -> list[Check]:
        return [check for check in self.checks if check.status == "FAILURE"]

    def passed(self) -> list[Check]:
        return [check for check in self.checks if check.status == "SUCCESS"]


# The suite writes each scenario's checks to server-<scenario>-<ISO time with dashes>/.
RESULT_DIR = re.compile(r"^server-(?P<name>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def run(alias: str, mcp_url: str, timeout_s: float = 45.0) -> dict[str, Scenario]:
    """Every server scenario of suite `alias` against `mcp_url`, by scenario name."""
    with tempfile.TemporaryDirectory(prefix="conformance-") as output:
        completed = subprocess.run(
            [node(), str(_suite_entry(alias)), "server", "--url", mcp_url, "--suite", "all"]
            + ["--output-dir", output],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1"},
        )
        scenarios = _read_results(Path(output))
    if not scenarios:
        raise RuntimeError(f"the suite wrote no results:\n{completed.stdout}\n{completed.stderr}")
    return scenarios


def _read_results(output: Path) -> dict[str, Scenario]:
    scenarios: dict[str, Scenario] = {}
    for result in sorted(output.iterdir()):
        match = RESULT_DIR.match(result.name)
        if match is None:
            continue
        checks = json.loads((result / "checks.json").read_text())
        scenarios[match["name"]] = Scenario(
            match["name"],
            [
                Check(c["id"], c["status"], c.get("errorMessage") or "", c.get("details") or {})
                for c in checks
            ],
        )
    return scenarios


def summary(scenarios: dict[str, Scenario]) -> str:
    return "\n".join(
        f"{'FAIL' if s.failed() else 'pass'} {name}: {len(s.passed())} passed, "
        f"{len(s.failed())} failed"
        + "".join(f"\n    {c.id}: {c.message[:200]}" for c in s.failed())
        for name, s in scenarios.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the MCP conformance suites")
    parser.add_argument("--url", help="the server's /mcp URL; without it: install only")
    args = parser.parse_args()
    install()
    print(f"node {node()}; suites {', '.join(SUITES.values())} in {INSTALL_DIR}")
    if not args.url:
        return
    key = os.environ.get("GEOSVC_API_KEY")
    if not key:
        parser.error("set GEOSVC_API_KEY to an API key of the server")
    upstream, _, path = args.url.partition("://")[2].partition("/")
    scheme = args.url.partition("://")[0]
    with HeaderProxy(f"{scheme}://{upstream}", {"Authorization": f"Bearer {key}"}) as proxy:
        for alias, version in SUITES.items():
            print(f"\n== {alias} {version}\n{summary(run(alias, f'{proxy.url}/{path}'))}")


if __name__ == "__main__":
    main()
