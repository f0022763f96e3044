"""Issue 55, item 5: what the customer sees of an operator's grant and of a spend cap,
over real HTTP (a real server and worker, `v1_stack`); the grant is made with the real
`geosvc admin grant` command against the same database and Redis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.mcp.conftest import FREE_QUOTA, Stack
from tests.support.fixtures import ON_A_REDIS_CLUSTER_TOO
from tests.v1.conftest import Client

GEOSVC = str(Path(sys.executable).parent / "geosvc")


def grant(stack: Stack, user_id: str, credits: int) -> None:
    result = subprocess.run(
        [GEOSVC, "admin", "grant", user_id, str(credits), "--reason", "refund", "--actor", "ops"],
        env=stack.server.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert f"granted {credits} credits to {user_id}" in result.stdout


def call(client: Client) -> httpx.Response:
    return client.api.get("/v1/geocode", params={"query": "Denver"})


def credits_policy(header: str) -> dict[str, int]:
    """q or r and t of the "credits" entry of a RateLimit(-Policy) header."""
    entry = next(part for part in header.split(", ") if part.startswith('"credits"'))
    return {key: int(value) for key, value in (p.split("=") for p in entry.split(";")[1:])}


class TestGrant:
    def test_a_grant_shows_as_granted_credits_never_as_negative_use(
        self, v1_stack: Stack, client: Client
    ) -> None:
        granted = 5
        grant(v1_stack, client.user_id, granted)

        usage = client.usage()
        assert {k: usage[k] for k in ("used", "granted", "quota", "remaining", "percent")} == {
            "used": 0,
            "granted": granted,
            "quota": FREE_QUOTA,
            "remaining": FREE_QUOTA + granted,
            "percent": 0,
        }
        assert usage["state"] == "ok"

        first = call(client)
        assert first.status_code == 200
        assert first.headers["credits-used"] == "1"
        remaining = int(first.headers["credits-remaining"])
        assert remaining == FREE_QUOTA + granted - 1
        # r never above q: the month's credits before the limit include the grant
        policy = credits_policy(first.headers["ratelimit-policy"])
        assert policy["q"] == FREE_QUOTA + granted
        assert credits_policy(first.headers["ratelimit"])["r"] == remaining <= policy["q"]

        for _ in range(remaining):
            assert call(client).status_code == 200
        refused = call(client)

        assert refused.status_code == 402
        assert refused.headers["credits-remaining"] == "0"
        assert refused.headers["credits-used"] == str(FREE_QUOTA + granted)
        assert refused.headers["credits-state"] == "warning"  # at the limit, not past it
        usage = client.usage()
        assert (usage["used"], usage["granted"], usage["remaining"]) == (
            FREE_QUOTA + granted,
            granted,
            0,
        )
        assert (usage["percent"], usage["state"]) == (100.0, "warning")

    def test_the_usage_page_shows_the_grant(self, v1_stack: Stack, client: Client) -> None:
        grant(v1_stack, client.user_id, 3)

        page = client.control.get("/dashboard/usage")

        assert page.status_code == 200
        assert 'data-testid="used">0<' in page.text
        assert f"of {FREE_QUOTA} + 3 granted credits" in page.text
        assert "-" + "3" not in page.text.split('data-testid="used">')[1][:20]


@ON_A_REDIS_CLUSTER_TOO
class TestSpendCap:
    def test_a_refusal_by_the_spend_cap_says_the_state_of_the_cap(self, client: Client) -> None:
        cap = 3
        assert client.control.put("/usage/cap", json={"cap": cap}).status_code == 200
        answers = [call(client) for _ in range(cap)]
        assert [answer.status_code for answer in answers] == [200] * cap

        refused = call(client)

        assert refused.status_code == 402
        assert refused.json()["error"]["limit"] == "spend_cap"
        assert refused.headers["credits-remaining"] == "0"
        # at the cap: not "ok", as the quota alone (3 of 8) would say
        assert refused.headers["credits-state"] == "warning"
        assert answers[-1].headers["credits-state"] == "warning"
        assert answers[0].headers["credits-state"] == "ok"
        assert client.usage()["state"] == "warning"
