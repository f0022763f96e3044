"""What an OAuth access token costs /mcp next to an API key: the same `tools/list`
request, authenticated one way or the other, alternated request by request against one
running server (`make run`), so both see the same machine load. Prints the p50/p99 of
each and their ratio (goal: the token within about 1.1x of the key; both are a cached
dict lookup and one HMAC once warm).

    .venv/bin/python bench/oauth_verify.py URL EMAIL PASSWORD API_KEY [--requests 500]

URL is the server's base URL; EMAIL/PASSWORD sign in on the consent page (the demo
account `make run` prints); the access token comes from a real sign-in: registration,
consent, code exchange.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.oauth.conftest import MCP_HEADERS, TOOLS_LIST, Host, approve  # noqa: E402


def access_token(base_url: str, email: str, password: str) -> str:
    host = Host(base_url, "http://127.0.0.1:9/callback")  # never visited: the code is read
    host.discover()
    assert host.register(client_name="bench").status_code == 201
    with httpx.Client(base_url=base_url, timeout=30) as person:
        signed_in = person.post("/auth/signin", json={"email": email, "password": password})
        assert signed_in.status_code == 200, signed_in.text
        code = approve(person, host.authorization_url())["code"]
    return str(host.exchange(code).json()["access_token"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("email")
    parser.add_argument("password")
    parser.add_argument("api_key")
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    credentials = {
        "api key": args.api_key,
        "access token": access_token(args.url, args.email, args.password),
    }
    times: dict[str, list[float]] = {name: [] for name in credentials}
    with httpx.Client(timeout=30) as client:
        for index in range(args.requests + 20):
            for name, credential in credentials.items():
                headers = {**MCP_HEADERS, "Authorization": f"Bearer {credential}"}
                started = time.perf_counter()
                response = client.post(f"{args.url}/mcp", json=TOOLS_LIST, headers=headers)
                elapsed = time.perf_counter() - started
                assert response.status_code == 200, response.text
                if index >= 20:  # warm-up: first reads, connections
                    times[name].append(elapsed * 1000)
    for name, values in times.items():
        p99 = statistics.quantiles(values, n=100)[98]
        print(f"{name:13s} p50 {statistics.median(values):6.2f} ms   p99 {p99:6.2f} ms")
    ratio = statistics.median(times["access token"]) / statistics.median(times["api key"])
    print(f"access token / api key, p50: {ratio:.2f}x")


if __name__ == "__main__":
    main()
