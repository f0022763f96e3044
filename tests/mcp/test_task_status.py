"""2025-11-25's `notifications/tasks/status` where a stream is open (`app.mcp.task_status`):
a `tasks/result` from a client that takes SSE is streamed, the task's status pushed at
each change before the result. Raw JSON-RPC over real HTTP to a real api server and
Celery worker (the official client sends no `params.task`)."""

from __future__ import annotations

import httpx

from tests.mcp.conftest import Account, Stack
from tests.mcp.test_tasks import PROGRESS, Rpc, paying, postal_codes, sse_messages
from tests.mcp.test_tools import wait_for_ledger

# Enough rows that the standard plan's bulk pace takes seconds: seen working, then done.
ROWS = 10_000
ZIPS_IN_CYCLE = 8  # postal_codes() repeats this many


class TestTaskStatusOnTheResultStream:
    def test_status_is_pushed_until_the_end_then_the_synchronous_result(
        self, stack: Stack, account: Account
    ) -> None:
        rpc = Rpc(stack, paying(account).api_key)
        codes = postal_codes(ROWS)
        synchronous = rpc.result(
            "tools/call", {"name": "get_population", "arguments": {"postal_codes": codes[:100]}}
        )
        created = rpc.start("get_population", {"postal_codes": codes})
        body = {"jsonrpc": "2.0", "id": 7, "method": "tasks/result"}
        body["params"] = {"taskId": created["taskId"]}

        with httpx.stream("POST", rpc.url, json=body, headers=rpc.headers, timeout=60) as response:
            assert response.status_code == 200
            content_type = response.headers["content-type"]
            messages = sse_messages(response)
        # the same task's requests otherwise answered as before: one JSON response each
        got = httpx.post(rpc.url, json={**body, "method": "tasks/get"}, headers=rpc.headers)
        json_only = {**rpc.headers, "Accept": "application/json"}
        again = httpx.post(rpc.url, json=body, headers=json_only, timeout=60)

        assert content_type.startswith("text/event-stream")
        *notifications, answer = messages
        assert {m["method"] for m in notifications} == {"notifications/tasks/status"}
        statuses = [m["params"] for m in notifications]
        assert {s["taskId"] for s in statuses} == {created["taskId"]}
        assert statuses[0]["status"] == "working"
        assert statuses[-1]["status"] == "completed"
        assert all(s["status"] == "working" for s in statuses[:-1])
        assert all(PROGRESS.match(s["statusMessage"]) for s in statuses)
        assert statuses[-1]["statusMessage"].startswith(f"{ROWS:,} of {ROWS:,} rows")
        assert all(s["ttl"] > 0 and s["pollInterval"] > 0 for s in statuses)
        assert answer["id"] == 7
        result = answer["result"]
        rows = result["structuredContent"]["results"]
        # every row as the synchronous call answers its postal code
        sync_rows = synchronous["structuredContent"]["results"]
        assert rows == [sync_rows[row % ZIPS_IN_CYCLE] for row in range(ROWS)]
        assert result["_meta"]["geosvc/usage"]["charged"] == ROWS
        assert got.headers["content-type"].startswith("application/json")
        assert got.json()["result"]["status"] == "completed"
        assert again.headers["content-type"].startswith("application/json")
        assert again.json()["result"]["structuredContent"] == result["structuredContent"]
        assert wait_for_ledger(stack, account.user_id, 100 + ROWS, deadline_s=60) == 100 + ROWS
