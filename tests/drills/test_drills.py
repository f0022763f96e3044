"""Short versions of the fault drills (`bench/fault_drills.py`): the production shape under
12 MCP clients while a worker, Redis or PostgreSQL fails. Every served call is billed once,
tool calls recover by themselves, and nothing answers HTTP 500."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from drill_stack import Stack
from fault_drills import Result, account, print_table, run_one, short_options

pytestmark = pytest.mark.drill


def drill(stack: Stack, name: str, **overrides: object) -> Result:
    result = asyncio.run(run_one(stack, name, short_options(**overrides)))
    print_table([result])  # shown with -s or on failure
    return result


def assert_billed_exactly(result: Result) -> None:
    assert result.calls.ok > 0
    assert result.ledger == result.calls.ok, result
    assert result.counter == result.calls.ok, result


def assert_no_server_errors(result: Result) -> None:
    assert result.works_afterwards, "tool calls did not work again within 60 s"
    assert result.calls.statuses[500] == 0, result.calls.statuses
    assert result.calls.hung == 0, result.calls
    assert "INTERNAL" not in result.calls.failed, result.calls.failed


def test_pool_child_kill_bills_every_answered_call(drill_stack: Stack) -> None:
    result = drill(drill_stack, "pool-child-kill")
    assert_billed_exactly(result)
    assert_no_server_errors(result)


def test_worker_main_kill_recovers_without_a_hand_restart(drill_stack: Stack) -> None:
    result = drill(drill_stack, "worker-main-kill")
    assert result.recovery_s is not None, result
    assert result.recovery_s < 30, result
    assert_billed_exactly(result)
    assert_no_server_errors(result)


def test_redis_restart_recovers_within_30_s_and_loses_at_most_a_second(
    drill_stack: Stack,
) -> None:
    result = drill(drill_stack, "redis-restart")
    assert not [note for note in result.notes if "no success" in note], result.notes
    assert result.recovery_s is not None, result
    assert result.recovery_s < 30, result
    assert_no_server_errors(result)
    # appendfsync everysec: at most about a second of events per crash
    calls_per_s = result.calls.ok / max(1.0, result.elapsed_s)
    assert result.lost <= 2 * calls_per_s * 2, result  # 2 cycles, 2 s margin each


def test_drain_killed_mid_drain_stalls_the_outbox_only_seconds(drill_stack: Stack) -> None:
    result = drill(drill_stack, "drain-kill")
    stalls = [note for note in result.notes if note.startswith("outbox stalled")]
    assert stalls, result.notes
    assert float(stalls[0].split()[2]) < 10, stalls
    assert_billed_exactly(result)
    assert_no_server_errors(result)


def test_postgres_outage_keeps_tool_calls_working(drill_stack: Stack) -> None:
    result = drill(drill_stack, "postgres-stop")
    assert result.calls.ok >= 0.99 * result.calls.total(), result.calls
    assert_billed_exactly(result)
    assert_no_server_errors(result)
    control = next(note for note in result.notes if note.startswith("control plane"))
    assert "500" not in control, control
    assert "Error" not in control, control


def test_redis_flush_at_the_free_cap_answers_no_500(drill_stack: Stack) -> None:
    # FLUSHALL also drops the usage events not yet drained, so the ledger never reaches
    # the calls made: no use waiting the usual 30 s for it
    result = drill(drill_stack, "free-cap-flush", settle=3.0)
    assert_no_server_errors(result)
    assert result.works_afterwards


async def one_call(stack: Stack, api_key: str) -> str:
    """ "ok", an error code, or the HTTP status of one get_population call."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
    statuses: list[int] = []

    async def on_response(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    http.event_hooks["response"].append(on_response)
    try:
        async with (
            http,
            Client(streamable_http_client(stack.mcp_url, http_client=http), mode="legacy") as c,
        ):
            result = await c.call_tool("get_population", {"postal_code": "94103"})
    except Exception:
        return f"http {statuses[-1] if statuses else '?'}"
    if result.is_error:
        return str((result.structured_content or {}).get("error", {}).get("code"))
    return "ok"


def test_a_key_revoked_before_a_postgres_outage_stays_revoked(drill_stack: Stack) -> None:
    _, kept_key, kept_owner = account(drill_stack)
    _, revoked_key, revoked_owner = account(drill_stack)
    kept_owner.close()
    assert asyncio.run(one_call(drill_stack, kept_key)) == "ok"
    assert asyncio.run(one_call(drill_stack, revoked_key)) == "ok"
    key_id = revoked_key.split("_")[3]
    assert revoked_owner.delete(f"/api-keys/{key_id}").status_code == 204
    revoked_owner.close()

    drill_stack.postgres.stop("fast")
    try:
        assert asyncio.run(one_call(drill_stack, kept_key)) == "ok"
        assert asyncio.run(one_call(drill_stack, revoked_key)) in ("http 401", "http 503")
    finally:
        drill_stack.postgres.start()
