"""Issue 57, item 1: test-mode keys (`svc_test_ak_`). Real data and real errors over
/v1 and /mcp, on the account's own test counter: live usage, the free cap, the account's
spend cap and the ledger never see them. A real server and worker (`v1_stack`)."""

from __future__ import annotations

import time

import httpx

from tests.mcp.conftest import FREE_QUOTA, Stack, connect, structured
from tests.v1.conftest import Client, ledger_rows, wait_for_rows


def make_test_key(client: Client) -> tuple[httpx.Client, str]:
    """A test-mode key of the client's account: a data-API client using it, and its id."""
    created = client.control.post("/api-keys", json={"name": "ci", "env": "test"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["key"]["env"] == "test"
    api = httpx.Client(
        base_url=str(client.api.base_url),
        timeout=30,
        headers={"Authorization": f"Bearer {body['plaintext']}"},
    )
    return api, str(body["key"]["keyId"])


class TestCreation:
    def test_a_test_key_has_the_test_prefix_and_env_and_live_stays_the_default(
        self, client: Client
    ) -> None:
        created = client.control.post("/api-keys", json={"name": "ci", "env": "test"}).json()
        live = client.control.post("/api-keys", json={"name": "prod"}).json()
        listed = {k["keyId"]: k["env"] for k in client.control.get("/api-keys").json()["keys"]}

        key_id = created["key"]["keyId"]
        assert created["plaintext"].startswith(f"svc_test_ak_{key_id}_")
        assert live["plaintext"].startswith("svc_live_ak_")
        assert live["key"]["env"] == "live"
        assert listed[key_id] == "test"
        assert listed[live["key"]["keyId"]] == "live"

    def test_an_unknown_env_is_refused(self, client: Client) -> None:
        refused = client.control.post("/api-keys", json={"name": "x", "env": "staging"})

        assert refused.status_code == 422
        assert "env" in refused.json()["error"]["message"]

    def test_a_key_sent_with_the_other_environment_prefix_is_refused(self, client: Client) -> None:
        created = client.control.post("/api-keys", json={"name": "ci", "env": "test"}).json()
        as_live = created["plaintext"].replace("svc_test_ak_", "svc_live_ak_", 1)
        live_as_test = client.api_key.replace("svc_live_ak_", "svc_test_ak_", 1)

        for token in (as_live, live_as_test):
            refused = client.api.get(
                "/v1/geocode",
                params={"query": "Denver"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert refused.status_code == 401, token[:12]
            assert refused.json()["error"]["code"] == "UNAUTHENTICATED"


class TestMetering:
    def test_test_calls_answer_real_data_and_errors_on_their_own_counter(
        self, v1_stack: Stack, client: Client
    ) -> None:
        api, _key_id = make_test_key(client)
        with api:
            ok = api.get("/v1/population", params={"postal_code": "10001"})
            missing = api.get("/v1/population", params={"postal_code": "00000"})
            live = client.api.get("/v1/population", params={"postal_code": "10001"})

        assert ok.status_code == 200
        assert ok.json() == live.json()  # the same real data as a live key's
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "NOT_FOUND"
        usage = client.usage()
        assert usage["used"] == 1  # the live call only
        assert (usage["test"]["used"], usage["test"]["limit"]) == (1, 10_000)
        assert wait_for_rows(v1_stack, client.user_id, 1) == [("get_population", 1)]

    def test_a_free_account_at_its_hard_cap_still_answers_test_calls(
        self, v1_stack: Stack, client: Client
    ) -> None:
        api, _key_id = make_test_key(client)
        with api:
            first_test = api.get("/v1/geocode", params={"query": "Denver"})
            for _ in range(FREE_QUOTA):
                assert client.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200
            live_refused = client.api.get("/v1/geocode", params={"query": "Denver"})
            test_answers = [api.get("/v1/geocode", params={"query": "Denver"}) for _ in range(3)]

        assert first_test.status_code == 200
        assert live_refused.status_code == 402
        assert live_refused.json()["error"]["code"] == "QUOTA_EXCEEDED"
        assert [r.status_code for r in test_answers] == [200] * 3
        assert test_answers[0].json() == first_test.json()
        usage = client.usage()
        assert (usage["used"], usage["state"]) == (FREE_QUOTA, "warning")
        assert usage["test"]["used"] == 4
        # the ledger (what billing reads) has the live calls only
        assert len(wait_for_rows(v1_stack, client.user_id, FREE_QUOTA)) == FREE_QUOTA

    def test_a_spend_cap_reached_leaves_test_calls_answering(self, client: Client) -> None:
        assert client.control.put("/usage/cap", json={"cap": 2}).status_code == 200
        api, _key_id = make_test_key(client)
        with api:
            for _ in range(2):
                assert client.api.get("/v1/geocode", params={"query": "Denver"}).status_code == 200
            capped = client.api.get("/v1/geocode", params={"query": "Denver"})
            tested = api.get("/v1/geocode", params={"query": "Denver"})

        assert capped.status_code == 402
        assert capped.json()["error"]["limit"] == "spend_cap"
        assert tested.status_code == 200
        usage = client.usage()
        assert (usage["used"], usage["test"]["used"]) == (2, 1)

    def test_a_test_batch_is_counted_apart(self, v1_stack: Stack, client: Client) -> None:
        api, _key_id = make_test_key(client)
        with api:
            batch = api.post("/v1/geocode/batch", json={"items": [{"query": "Denver"}] * 3})

        assert batch.status_code == 200, batch.text
        usage = client.usage()
        assert (usage["used"], usage["test"]["used"]) == (0, 3)
        assert ledger_rows(v1_stack, client.user_id) == []


class TestMcp:
    async def test_a_test_key_calls_tools_over_mcp_on_the_test_counter(
        self, v1_stack: Stack, client: Client
    ) -> None:
        created = client.control.post("/api-keys", json={"name": "ci", "env": "test"}).json()
        async with connect(v1_stack.mcp_url, created["plaintext"]) as mcp:
            result = await mcp.call_tool("get_population", {"postal_code": "10001"})

        assert not result.is_error
        assert structured(result)["population"] > 0
        deadline = time.monotonic() + 10  # the commit's reply may be read after the answer
        while client.usage()["test"]["used"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        usage = client.usage()
        assert (usage["used"], usage["test"]["used"]) == (0, 1)


class TestLiveOnly:
    def test_a_test_key_cannot_start_a_bulk_job(self, client: Client) -> None:
        """A job is charged to live credits (`app.metering.chunks`): refused, stored and
        charged nothing, in our envelope saying what to use instead."""
        api, _key_id = make_test_key(client)
        with api:
            refused = api.post("/v1/jobs", json={"tool": "geocode", "items": [{"query": "Paris"}]})
            listed = api.get("/v1/jobs")

        assert refused.status_code == 403
        error = refused.json()["error"]
        assert (error["code"], error["reason"]) == ("FORBIDDEN", "test_key")
        assert "Use a live key" in error["message"]
        assert listed.status_code == 200
        assert listed.json()["jobs"] == []
        assert client.usage()["used"] == 0

    def test_a_test_key_cannot_run_a_tool_as_an_mcp_task(
        self, v1_stack: Stack, client: Client
    ) -> None:
        """An MCP task is a job (charged to live credits): refused at the edge."""
        created = client.control.post("/api-keys", json={"name": "ci", "env": "test"}).json()
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "geocode",
                "arguments": {"query": "Paris"},
                "task": {"ttl": 60_000},
            },
        }
        headers = {
            "Authorization": f"Bearer {created['plaintext']}",
            "Accept": "application/json, text/event-stream",
        }

        refused = httpx.post(v1_stack.mcp_url, json=call, headers=headers, timeout=30)

        assert refused.status_code == 200
        body = refused.json()
        assert body["id"] == 7
        assert body["error"]["data"]["error"]["reason"] == "test_key"
        assert "live key" in body["error"]["message"]
        assert client.usage()["used"] == 0
