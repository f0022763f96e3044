"""Long lists as MCP tasks (issue 59, items 1-2), end to end: a real api server and Celery
worker, the jobs engine on the real database.

2025-11-25 (core tasks): the official Python client does not send `params.task`, so these
are raw JSON-RPC posts over real HTTP. 2026-07-28 (the `io.modelcontextprotocol/tasks`
extension): the official client, given a client extension that claims `resultType:
"task"` and polls `tasks/get` until the task ends, as SEP-2663 asks of a client."""

from __future__ import annotations

import json
import re
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim

from tests.billing.conftest import subscribe
from tests.mcp.conftest import Account, Stack, connect, structured, usage_meta
from tests.mcp.test_tools import wait_for_ledger
from tests.support.live_server import launch_live_server, wait_until_healthy

LEGACY = "2025-11-25"
EXTENSION = "io.modelcontextprotocol/tasks"
ZIPS = ["10001", "94103", "60614", "02139", "98101", "30309", "78701", "80202"]
LIST_TOOLS = {"get_population", "get_average_income", "get_demographics", "geocode"}
LIST_TOOLS |= {"reverse_geocode"}
PROGRESS = re.compile(r"^[\d,]+ of [\d,]+ rows")


def postal_codes(count: int) -> list[str]:
    return list(islice(cycle(ZIPS), count))


class Rpc:
    """JSON-RPC posts to /mcp as a 2025-11-25 client (stateless: no initialize needed)."""

    def __init__(self, stack: Stack, api_key: str) -> None:
        self.url = stack.mcp_url
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {api_key}",
            "MCP-Protocol-Version": LEGACY,
        }

    def post(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer, whether one JSON response or the last message of an SSE stream (a
        `tasks/result` is streamed to a client that takes SSE: test_task_status.py)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = httpx.post(self.url, json=body, headers=self.headers, timeout=60)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            return sse_messages(response)[-1]
        return dict(response.json())

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.post(method, params)
        assert "result" in answer, answer
        return dict(answer["result"])

    def error(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.post(method, params)
        assert "error" in answer, answer
        return dict(answer["error"])

    def start(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments, "task": {"ttl": 60_000}}
        return dict(self.result("tools/call", params)["task"])

    def until_ended(self, task_id: str, deadline_s: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + deadline_s
        while True:
            task = self.result("tasks/get", {"taskId": task_id})
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            assert PROGRESS.match(task["statusMessage"]), task
            assert time.monotonic() < deadline, task
            time.sleep(0.2)


def paying(account: Account) -> Account:
    """The standard plan: its bulk pace answers a list of hundreds in well under a second."""
    subscribe(account.http)
    return account


class TestLegacyAdvertising:
    def test_initialize_declares_tasks_and_list_tools_support_them(
        self, stack: Stack, account: Account
    ) -> None:
        rpc = Rpc(stack, account.api_key)
        initialized = rpc.result(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "tests", "version": "1"},
            },
        )
        tools = rpc.result("tools/list", {})["tools"]

        assert initialized["capabilities"]["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
        supported = {t["name"] for t in tools if t.get("execution", {}).get("taskSupport")}
        assert supported == LIST_TOOLS
        assert {t["execution"]["taskSupport"] for t in tools if t["name"] in supported} == {
            "optional"
        }
        geocode = next(t for t in tools if t["name"] == "geocode")
        assert geocode["inputSchema"]["properties"]["queries"]["maxItems"] == 10_000


class TestLegacyTasks:
    def test_a_list_of_150_runs_as_a_task_and_answers_the_batch_result(
        self, stack: Stack, account: Account
    ) -> None:
        rpc = Rpc(stack, paying(account).api_key)
        codes = postal_codes(150)

        created = rpc.start("get_population", {"postal_codes": codes})
        ended = rpc.until_ended(created["taskId"])
        result = rpc.result("tasks/result", {"taskId": created["taskId"]})

        assert created["status"] == "working"
        assert created["statusMessage"] == "0 of 150 rows"
        assert created["pollInterval"] > 0
        assert created["ttl"] > 0
        assert ended["status"] == "completed", ended
        assert ended["statusMessage"].startswith("150 of 150 rows")
        content = result["structuredContent"]
        summary, data = result["content"][0]["text"].split("\n")
        assert json.loads(data) == content
        assert [item["result"]["postalCode"] for item in content["results"]] == codes
        assert content["credits"] == 150
        assert result["_meta"]["geosvc/usage"]["charged"] == 150
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {
            "taskId": created["taskId"]
        }
        assert wait_for_ledger(stack, account.user_id, 150) == 150

    def test_one_call_as_a_task_answers_what_the_call_answers(
        self, stack: Stack, account: Account
    ) -> None:
        rpc = Rpc(stack, account.api_key)
        direct = rpc.result(
            "tools/call", {"name": "geocode", "arguments": {"query": "Austin, TX", "limit": 1}}
        )

        created = rpc.start("geocode", {"query": "Austin, TX", "limit": 1})
        rpc.until_ended(created["taskId"])
        result = rpc.result("tasks/result", {"taskId": created["taskId"]})

        assert result["structuredContent"] == direct["structuredContent"]
        assert result["content"][0]["text"] == direct["content"][0]["text"]
        assert result["_meta"]["geosvc/usage"]["charged"] == 1

    def test_tasks_result_waits_for_the_end(self, stack: Stack, account: Account) -> None:
        rpc = Rpc(stack, paying(account).api_key)
        created = rpc.start("get_population", {"postal_codes": postal_codes(300)})

        result = rpc.result("tasks/result", {"taskId": created["taskId"]})

        assert len(result["structuredContent"]["results"]) == 300
        assert rpc.result("tasks/get", {"taskId": created["taskId"]})["status"] == "completed"

    def test_without_a_task_the_100_item_limit_stays(self, stack: Stack, account: Account) -> None:
        rpc = Rpc(stack, account.api_key)
        params = {"name": "get_population", "arguments": {"postal_codes": postal_codes(101)}}

        result = rpc.result("tools/call", params)

        assert result["isError"] is True
        assert result["structuredContent"]["error"]["code"] == "INVALID_ARGUMENT"
        assert "1 to 100 items" in result["structuredContent"]["error"]["message"]

    def test_over_10000_items_is_refused_at_no_cost(self, stack: Stack, account: Account) -> None:
        rpc = Rpc(stack, account.api_key)
        params = {
            "name": "get_population",
            "arguments": {"postal_codes": postal_codes(10_001)},
            "task": {},
        }

        error = rpc.error("tools/call", params)

        assert error["code"] == -32602
        assert error["data"]["code"] == "INVALID_ARGUMENT"
        assert "1 to 10,000 items" in error["message"]
        assert rpc.result("tasks/list", {})["tasks"] == []

    def test_a_tool_without_task_support_is_method_not_found(
        self, stack: Stack, account: Account
    ) -> None:
        rpc = Rpc(stack, account.api_key)
        params = {"name": "static_map", "arguments": {"center": {"lat": 0, "lon": 0}}, "task": {}}

        assert rpc.error("tools/call", params)["code"] == -32601

    def test_list_and_cancel(self, stack: Stack, account: Account) -> None:
        """A free account's pace is slow: the task is still working when it is cancelled;
        rows answered before are kept (and charged), none after."""
        rpc = Rpc(stack, account.api_key)
        created = rpc.start("get_population", {"postal_codes": postal_codes(2_000)})

        listed = rpc.result("tasks/list", {})["tasks"]
        cancelled = rpc.result("tasks/cancel", {"taskId": created["taskId"]})
        again = rpc.error("tasks/cancel", {"taskId": created["taskId"]})
        result = rpc.result("tasks/result", {"taskId": created["taskId"]})

        assert [task["taskId"] for task in listed] == [created["taskId"]]
        assert cancelled["status"] == "cancelled"
        assert again["code"] == -32602
        rows = result["structuredContent"]["results"]
        assert len(rows) == 2_000
        charged = result["_meta"]["geosvc/usage"]["charged"]
        # The rows after the cancel are CANCELLED; on a machine too busy to send the cancel
        # within the seconds the free pace takes to spend the quota (1,000), they are past
        # the quota first, and said so.
        expected = "CANCELLED" if charged < 1_000 else "QUOTA_EXCEEDED"
        assert rows[-1]["error"]["code"] == expected
        assert charged == sum(1 for row in rows if "result" in row)
        assert wait_for_ledger(stack, account.user_id, charged) == charged

    def test_another_replica_finds_the_task_at_once(
        self, stack: Stack, account: Account, tmp_path: Path
    ) -> None:
        """The job is committed before CreateTaskResult goes out: an api process that did
        not create it answers tasks/get for it right away."""
        replica = launch_live_server(stack.server.env, tmp_path / "replica.log")
        try:
            wait_until_healthy(replica, deadline_s=60)
            created = Rpc(stack, account.api_key).start("geocode", {"queries": ["Paris"] * 150})
            elsewhere = Rpc(stack, account.api_key)
            elsewhere.url = f"{replica.url}/mcp"

            seen = elsewhere.result("tasks/get", {"taskId": created["taskId"]})
        finally:
            replica.stop()

        assert seen["taskId"] == created["taskId"]
        assert PROGRESS.match(seen["statusMessage"])

    def test_another_accounts_task_is_not_found(
        self, stack: Stack, account: Account, other_account: Account
    ) -> None:
        mine = Rpc(stack, account.api_key)
        theirs = Rpc(stack, other_account.api_key)
        created = mine.start("geocode", {"queries": ["Austin, TX", "Paris"]})

        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert theirs.error(method, {"taskId": created["taskId"]})["code"] == -32602
        assert theirs.result("tasks/list", {})["tasks"] == []
        assert mine.until_ended(created["taskId"])["status"] == "completed"


# The 2026-07-28 extension, as a client implements it (SEP-2663).


class CreatedTask(types.Result):
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class GetTask(types.Request[types.GetTaskRequestParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: types.GetTaskRequestParams
    name_param = "taskId"  # SEP-2663: tasks/* carry the task id in Mcp-Name


class Tasks(ClientExtension):
    """Resolves a task by polling tasks/get; keeps what it saw for the test."""

    identifier = EXTENSION

    def __init__(self) -> None:
        self.created: list[CreatedTask] = []
        self.seen: list[DetailedTask] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        self.created.append(created)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            request = GetTask(params=types.GetTaskRequestParams(task_id=created.task_id))
            task = await ctx.session.send_request(request, DetailedTask)
            self.seen.append(task)
            if task.status == "completed" and task.result is not None:
                return types.CallToolResult.model_validate(task.result)
            assert task.status == "working", task
            await anyio.sleep(0.2)
        raise AssertionError(f"task {created.task_id} did not end")


class TestModernTasks:
    async def test_discover_advertises_the_extension(self, stack: Stack, account: Account) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            capabilities = client.server_capabilities

        assert capabilities.extensions is not None
        assert EXTENSION in capabilities.extensions

    async def test_a_long_list_is_answered_with_a_task_the_client_resolves(
        self, stack: Stack, account: Account
    ) -> None:
        extension = Tasks()
        codes = postal_codes(250)
        async with connect(
            stack.mcp_url, paying(account).api_key, extensions=[extension]
        ) as client:
            result = await client.call_tool("get_population", {"postal_codes": codes})

        assert len(extension.created) == 1
        assert extension.created[0].status == "working"
        assert extension.created[0].poll_interval_ms
        assert all(PROGRESS.match(task.status_message or "") for task in extension.seen)
        content = structured(result)
        assert [item["result"]["postalCode"] for item in content["results"]] == codes
        assert usage_meta(result)["charged"] == content["credits"] == 250
        assert wait_for_ledger(stack, account.user_id, 250) == 250

    async def test_a_short_list_is_answered_at_once(self, stack: Stack, account: Account) -> None:
        extension = Tasks()
        async with connect(stack.mcp_url, account.api_key, extensions=[extension]) as client:
            result = await client.call_tool("geocode", {"queries": ["Austin, TX", "Paris"]})

        assert extension.created == []
        assert len(structured(result)["results"]) == 2

    async def test_a_long_list_without_the_extension_keeps_the_100_item_limit(
        self, stack: Stack, account: Account
    ) -> None:
        async with connect(stack.mcp_url, account.api_key) as client:
            result = await client.call_tool("get_population", {"postal_codes": postal_codes(150)})

        assert result.is_error
        assert structured(result)["error"]["code"] == "INVALID_ARGUMENT"
        assert usage_meta(result)["charged"] == 0


MODERN = "2026-07-28"


def modern_request(
    stack: Stack,
    api_key: str,
    method: str,
    params: dict[str, Any],
    name: str | None = None,
    *,
    extension: bool = True,
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """A 2026-07-28 request declaring the tasks extension, as raw HTTP parts."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {api_key}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **({"Mcp-Name": name} if name is not None else {}),
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": (
            {"extensions": {EXTENSION: {}}} if extension else {}
        ),
    }
    body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": {**params, "_meta": meta}}
    return stack.mcp_url, headers, body


def sse_messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response, read until it ends."""
    return [
        json.loads(line.removeprefix("data:").strip())
        for line in response.iter_lines()
        if line.startswith("data:")
    ]


class TestTaskNotifications:
    def test_a_listen_stream_reports_each_change_until_the_task_ends(
        self, stack: Stack, account: Account, other_account: Account
    ) -> None:
        """10,000 items, the most a task takes: the standard plan's bulk pace answers them in
        seconds, long enough to see the rows go by."""
        url, headers, body = modern_request(
            stack,
            paying(account).api_key,
            "tools/call",
            {"name": "get_population", "arguments": {"postal_codes": postal_codes(10_000)}},
            name="get_population",
        )
        created = httpx.post(url, json=body, headers=headers, timeout=30).json()["result"]
        theirs = Rpc(stack, other_account.api_key).start("geocode", {"query": "Paris"})
        listen = {"notifications": {"taskIds": [created["taskId"], theirs["taskId"]]}}
        url, headers, body = modern_request(stack, account.api_key, "subscriptions/listen", listen)

        with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
            assert response.status_code == 200
            messages = sse_messages(response)

        assert created["resultType"] == "task"
        ack, *updates, end = messages
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"]["taskIds"] == [created["taskId"]]
        assert {m["method"] for m in updates} == {"notifications/tasks"}
        tasks = [m["params"] for m in updates]
        assert {t["taskId"] for t in tasks} == {created["taskId"]}
        assert all(PROGRESS.match(t["statusMessage"]) for t in tasks)
        assert [t["status"] for t in tasks][-1] == "completed"
        assert len(tasks) >= 2  # working at least once, then completed
        result = tasks[-1]["result"]
        assert len(result["structuredContent"]["results"]) == 10_000
        assert result["structuredContent"]["credits"] == 10_000
        assert result["_meta"]["geosvc/usage"]["charged"] == 10_000
        assert wait_for_ledger(stack, account.user_id, 10_000, deadline_s=60) == 10_000
        assert end["id"] == "r1"
        assert end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "r1"


class TestModernTaskRequests:
    @pytest.mark.parametrize(
        ("extension", "name", "status", "code"),
        [
            (False, "{task}", 400, -32021),  # the extension not declared (SEP-2575)
            (True, "job_another", 400, -32020),  # Mcp-Name is not the task (SEP-2663)
            (True, "{task}", 200, None),
        ],
    )
    def test_tasks_get_needs_the_extension_and_the_task_in_mcp_name(
        self,
        stack: Stack,
        account: Account,
        extension: bool,
        name: str,
        status: int,
        code: int | None,
    ) -> None:
        task = Rpc(stack, account.api_key).start("geocode", {"query": "Paris"})["taskId"]
        url, headers, body = modern_request(
            stack,
            account.api_key,
            "tasks/get",
            {"taskId": task},
            name=name.replace("{task}", task),
            extension=extension,
        )

        response = httpx.post(url, json=body, headers=headers, timeout=30)

        assert response.status_code == status, response.text
        answer = response.json()
        if code is None:
            assert answer["result"]["taskId"] == task
        else:
            assert answer["error"]["code"] == code
