"""Issue 38, item 2: every fenced block in README.md and docs/*.md runs as written.

Each block is checked by its language, against a live server (an api and a worker on
SQLite) standing in for `make run` at http://127.0.0.1:8000:
- `sh`/`bash`/`shell`: run by bash (`-euo pipefail`) in a scratch directory, with the
  server's URL for http://127.0.0.1:8000, a real key for `$KEY` and for the placeholder
  `svc_live_ak_<keyId>_<secret>`; the error codes in its output are the ones its
  comments show (`# {"error":{"code":"NOT_FOUND",...}}`), in that order, no more.
- `python`: run as a script, with the same substitutions and `KEY` in the environment.
- `json`: parsed; an MCP client configuration (`mcpServers`) has what a client needs, an
  `npx` one says `-y` (a host with no terminal cancels the install), and a remote one's
  URL and headers answer an MCP `tools/list`.
- `yaml`, `toml`: parsed.
- `text`: output or a listing, not code: nothing to run.
Any other block, or one that cannot run here (docker, a production database, the npm
registry, a server left running), is marked on the line before its fence with
`<!-- not-runnable: why -->`; it is reported as skipped with that reason. A block with
no language fails: say what it is.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.mcp.conftest import Stack, start_stack
from tests.support.factories import sign_up
from tests.support.live_server import TEST_RUN_PREFIX, service_env

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOC_URL = "http://127.0.0.1:8000"
KEY_PLACEHOLDER = "svc_live_ak_<keyId>_<secret>"
MARK = re.compile(r"<!--\s*not-runnable:\s*(?P<why>.+?)\s*-->")
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)\s*$")
ERROR_CODE = re.compile(r'"code"\s*:\s*"(?P<code>[A-Z_]+)"')
SHELLS = ("sh", "bash", "shell")
RUN_TIMEOUT_S = 120


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    not_runnable: str | None  # the mark's reason

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks_of(path: Path) -> Iterator[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    previous = ""  # the last non-blank line before a fence
    number = 0
    while number < len(lines):
        opening = FENCE.match(lines[number].strip())
        if opening is None:
            if lines[number].strip():
                previous = lines[number]
            number += 1
            continue
        fence, body = opening.group("fence"), []
        end = number + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            body.append(lines[end])
            end += 1
        mark = MARK.search(previous)
        yield Block(
            path,
            number + 1,
            opening.group("lang").lower(),
            "\n".join(body) + "\n",
            mark.group("why") if mark else None,
        )
        previous, number = "", end + 1


ALL_BLOCKS = [block for path in DOCS for block in blocks_of(path)]


@dataclass(frozen=True)
class DocServer:
    url: str
    key: str


@pytest.fixture(scope="module")
def doc_server(
    redis_url: str, geodata_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DocServer]:
    """What `make run` gives a reader: a server with a worker, an account and its key."""
    logs = tmp_path_factory.mktemp("docs")
    env = service_env(
        database_url=f"sqlite:///{logs / 'geosvc.db'}",
        redis_url=redis_url,
        data_dir=geodata_dir,
        GEOSVC_REDIS_KEY_PREFIX=f"{TEST_RUN_PREFIX}docs:",
    )
    stack: Stack = start_stack(env, logs)
    try:
        with httpx.Client(base_url=stack.server.url, timeout=30) as http:
            sign_up(http)
            key = http.post("/api-keys", json={"name": "docs"}).json()["plaintext"]
        yield DocServer(stack.server.url, key)
    finally:
        stack.server.stop()
        stack.worker.stop(wait=False)


def as_run_here(code: str, server: DocServer) -> str:
    return code.replace(DOC_URL, server.url).replace(KEY_PLACEHOLDER, server.key)


def run(command: list[str], server: DocServer, cwd: Path) -> subprocess.CompletedProcess[str]:
    # The docs are written to run from a checkout: `.venv/bin/...` and the read-only folders
    # they name (deploy/ manifests, docs/) are linked in; what a block writes stays in cwd.
    for name in (".venv", "deploy", "docs"):
        (cwd / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOSVC_")}
    env.update(KEY=server.key, PATH=f"{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}")
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )


def expected_codes(code: str) -> list[str]:
    """The error codes the block's comments show as output, in order."""
    comments = "\n".join(line for line in code.splitlines() if line.lstrip().startswith("#"))
    return [match.group("code") for match in ERROR_CODE.finditer(comments)]


def check_shell(block: Block, server: DocServer, tmp_path: Path) -> None:
    result = run(
        ["bash", "-euo", "pipefail", "-c", as_run_here(block.code, server)], server, tmp_path
    )
    shown = f"{block.name} failed as written:\n{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, shown
    codes = [match.group("code") for match in ERROR_CODE.finditer(result.stdout)]
    assert codes == expected_codes(block.code), shown


def check_python(block: Block, server: DocServer, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(as_run_here(block.code, server), encoding="utf-8")
    result = run([sys.executable, str(script)], server, tmp_path)
    assert result.returncode == 0, f"{block.name} failed as written:\n{result.stderr}"


def check_mcp_config(block: Block, config: object, server: DocServer) -> None:
    assert isinstance(config, dict), block.name
    servers = config.get("mcpServers")
    assert isinstance(servers, dict), f"{block.name}: no mcpServers"
    assert servers, f"{block.name}: no mcpServers"
    for name, entry in servers.items():
        assert isinstance(entry, dict), f"{block.name}: {name}"
        if "command" in entry:
            args = entry.get("args")
            assert isinstance(args, list), block.name
            assert all(isinstance(arg, str) for arg in args), block.name
            if entry["command"] == "npx":
                assert "-y" in args or "--yes" in args, f"{block.name}: npx without -y"
            continue
        assert entry.get("type") in ("http", "streamable-http"), f"{block.name}: {name}"
        headers = entry.get("headers", {})
        answer = httpx.post(
            as_run_here(entry["url"], server),
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={
                **{k: as_run_here(v, server) for k, v in headers.items()},
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
            },
            timeout=30,
        )
        assert answer.status_code == 200, f"{block.name}: {answer.status_code} {answer.text}"
        assert "get_population" in answer.text


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[block.name for block in ALL_BLOCKS])
def test_the_block_runs_as_written(
    block: Block, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if block.not_runnable is not None:
        pytest.skip(f"marked not runnable here: {block.not_runnable}")
    assert block.lang, (
        f"{block.name}: a fenced block without a language; say what it is (sh, python, "
        "json, text for output) or mark it <!-- not-runnable: why -->"
    )
    if block.lang == "text":
        return
    if block.lang in ("yaml", "yml"):
        yaml.safe_load(block.code)
        return
    if block.lang == "toml":
        tomllib.loads(block.code)
        return
    if block.lang == "json":
        config = json.loads(block.code)
        if isinstance(config, dict) and "mcpServers" in config:
            check_mcp_config(block, config, request.getfixturevalue("doc_server"))
        return
    assert block.lang in (*SHELLS, "python"), (
        f"{block.name}: a {block.lang} block can't run here: mark it "
        "<!-- not-runnable: why --> or make it sh, python, json, yaml, toml or text"
    )
    server: DocServer = request.getfixturevalue("doc_server")
    if block.lang == "python":
        check_python(block, server, tmp_path)
    else:
        check_shell(block, server, tmp_path)


def test_the_docs_have_blocks_and_marks_say_why() -> None:
    assert len(ALL_BLOCKS) >= 10  # the extractor finds them
    for block in ALL_BLOCKS:
        if block.not_runnable is not None:
            assert len(block.not_runnable) >= 10, f"{block.name}: say why it cannot run here"
