"""Real third-party MCP clients in Node: the MCP Inspector CLI, and `mcp-remote` as the
stdio proxy the README configures for clients that only run local servers. Needs node and
npm; CI (REQUIRE_SERVICES=1) fails without them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters

from app.geodata.catalogue import TOOL_SPECS
from tests.mcp.conftest import Account, Stack, connect, structured, usage_meta
from tests.mcp.test_host_view import BIG_MAP
from tests.mcp.test_tool_budget import budget_message, over_budget
from tests.mcp.test_tools import GOOD_CALLS
from tests.support.services import REQUIRE_SERVICES

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
MCP_REMOTE = "mcp-remote@0.15.1"
INSTALL_DIR = Path(__file__).resolve().parents[2] / ".cache" / "node-clients"


def npm_binary(package: str, binary: str) -> Path:
    """`binary` of `package`, installed once under .cache/ (the npm registry is reachable)."""
    if shutil.which("npm") is None:
        if REQUIRE_SERVICES:
            pytest.fail("npm is needed for the Node MCP client tests (REQUIRE_SERVICES=1)")
        pytest.skip("npm is not installed")
    path = INSTALL_DIR / "node_modules" / ".bin" / binary
    if not path.exists():
        INSTALL_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(INSTALL_DIR), package],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return path


@pytest.fixture(scope="session")
def inspector() -> Path:
    return npm_binary(INSPECTOR, "mcp-inspector")


@pytest.fixture(scope="session")
def mcp_remote() -> Path:
    return npm_binary(MCP_REMOTE, "mcp-remote")


def run_inspector(
    inspector: Path, stack: Stack, api_key: str, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
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


def run_cli(inspector: Path, stack: Stack, api_key: str, *args: str) -> dict:
    completed = run_inspector(inspector, stack, api_key, *args)
    assert completed.returncode == 0, completed.stderr + completed.stdout
    return dict(json.loads(completed.stdout))


def call_with_inspector(
    inspector: Path, stack: Stack, api_key: str, tool: str, arguments: dict
) -> dict:
    """The Inspector CLI's tools/call result (an isError one too: exit status 5, printed)."""
    completed = run_inspector(
        inspector,
        stack,
        api_key,
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-args-json",
        json.dumps(arguments),
    )
    assert completed.returncode in (0, 5), completed.stderr + completed.stdout
    return dict(json.loads(completed.stdout))


def remote_server(mcp_remote: Path, stack: Stack, account: Account) -> StdioServerParameters:
    """mcp-remote as the README configures it, with the account's key."""
    return StdioServerParameters(
        command=str(mcp_remote),
        args=[
            stack.mcp_url,
            "--transport",
            "http-only",
            "--allow-http",
            "--header",
            "Authorization:${AUTH_HEADER}",
        ],
        env={**os.environ, "AUTH_HEADER": f"Bearer {account.api_key}"},
    )


def test_inspector_lists_and_calls_tools(inspector: Path, stack: Stack, account: Account) -> None:
    listed = run_cli(inspector, stack, account.api_key, "--method", "tools/list")
    called = call_with_inspector(
        inspector, stack, account.api_key, "get_population", {"postal_code": "94103"}
    )

    assert len(listed["tools"]) == len(TOOL_SPECS)
    assert called["isError"] is False
    assert called["structuredContent"]["postalCode"] == "94103"
    assert called["structuredContent"]["population"] > 0
    assert account.http.get("/usage").json()["used"] == 1


async def test_mcp_remote_proxies_the_tools_as_the_readme_configures_it(
    mcp_remote: Path, stack: Stack, account: Account
) -> None:
    async with Client(remote_server(mcp_remote, stack, account), mode="legacy") as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("get_population", {"postal_code": "94103"})

    assert len(tools) == len(TOOL_SPECS)
    assert not result.is_error
    assert result.structured_content["population"] > 0
    assert account.http.get("/usage").json()["used"] == 1


def revoke(account: Account) -> str:
    """Revoke the account's key; the message a caller of that key should see."""
    assert account.http.delete(f"/api-keys/{account.key_id}").status_code == 204
    return "This API key has been revoked; create a new one"


WRONG_KEY = "svc_live_ak_unknownkey123456_" + "A" * 40


def test_inspector_shows_why_a_key_is_refused(
    inspector: Path, stack: Stack, account: Account
) -> None:
    """Issue 10, item 10: the server's message, not "Interactive OAuth requires a TTY"."""
    message = revoke(account)
    for key, expected in ((account.api_key, message), (WRONG_KEY, "Invalid API key")):
        completed = run_inspector(inspector, stack, key, "--method", "tools/list")
        output = completed.stdout + completed.stderr
        assert completed.returncode != 0
        assert expected in output, output
        assert "OAuth" not in output


def test_mcp_remote_shows_why_a_key_is_refused(
    mcp_remote: Path, stack: Stack, account: Account
) -> None:
    """Not "Dynamic Client Registration rejected (HTTP 404)"."""
    message = revoke(account)
    completed = subprocess.run(
        [
            str(mcp_remote),
            stack.mcp_url,
            "--transport",
            "http-only",
            "--allow-http",
            "--header",
            f"Authorization:Bearer {account.api_key}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout + completed.stderr
    assert message in output, output
    assert "Client Registration" not in output


async def test_python_sdk_shows_why_a_key_is_refused(stack: Stack, account: Account) -> None:
    """Not "Server returned an error response"."""
    message = revoke(account)
    with pytest.raises(BaseException) as refused:  # noqa: PT011  # the SDK wraps it in groups
        async with connect(stack.mcp_url, account.api_key) as client:
            await client.list_tools()
    errors = [refused.value]
    while isinstance(errors[-1], BaseExceptionGroup):
        errors.append(errors[-1].exceptions[0])
    assert isinstance(errors[-1], MCPError), repr(refused.value)
    assert errors[-1].error.message == message
    assert errors[-1].error.data["code"] == "UNAUTHENTICATED"


class TestTheTypeScriptSdkValidates:
    """Issue 37, item 2: the Inspector CLI's client (TypeScript SDK 2.x) validates each
    answer against the smaller output schemas (Ajv) and takes error results as they are."""

    def test_answers_batches_errors_and_links_pass_the_inspectors_client(
        self, inspector: Path, stack: Stack, account: Account
    ) -> None:
        def call(tool: str, arguments: dict) -> dict:
            return call_with_inspector(inspector, stack, account.api_key, tool, arguments)

        listed = run_cli(inspector, stack, account.api_key, "--method", "tools/list")
        answers = [call(name, args) for name, args in GOOD_CALLS]
        batch = call("reverse_geocode", {"points": [{"lat": 48.8566, "lon": 2.3522}]})
        error = call("get_population", {"postal_code": "00000"})
        big = call("static_map", BIG_MAP)

        over = over_budget(listed["tools"])  # as the Inspector lists them
        assert over == {}, budget_message(over)
        for answer in [*answers, batch, big]:
            assert answer["isError"] is False, answer
            assert (
                json.loads(answer["content"][0]["text"].split("\n")[1])
                == (answer["structuredContent"])
            )
        assert error["isError"] is True
        assert error["structuredContent"]["error"]["code"] == "NOT_FOUND"
        assert error["_meta"]["geosvc/usage"]["charged"] == 0
        assert big["content"][1]["type"] == "resource_link"
        assert answers[0]["_meta"]["geosvc/usage"]["charged"] == 1
        assert account.http.get("/usage").json()["used"] == len(GOOD_CALLS) + 2

    async def test_mcp_remote_passes_the_text_meta_and_links_through(
        self, mcp_remote: Path, stack: Stack, account: Account
    ) -> None:
        async with Client(remote_server(mcp_remote, stack, account), mode="legacy") as client:
            answer = await client.call_tool("geocode", {"queries": ["Austin, TX", "zzqqxx"]})
            error = await client.call_tool("get_population", {"postal_code": "00000"})
            big = await client.call_tool("static_map", BIG_MAP)

        assert structured(answer)["credits"] == 1
        assert usage_meta(answer)["charged"] == 1
        assert structured(error)["error"]["code"] == "NOT_FOUND"
        assert usage_meta(error)["charged"] == 0
        assert big.content[1].type == "resource_link"
