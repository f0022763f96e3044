"""How long requests take while Redis is unresponsive (SIGSTOP: it accepts connections
and never answers), and how soon calls work again after SIGCONT.

    .venv/bin/python bench/redis_stall.py [--data-dir .geosvc] [--pause-s 25]

Starts its own redis-server, PostgreSQL, api, one worker and beat (bench/drill_stack.py),
signs up, makes one OK tool call, pauses Redis, then times one of each: an MCP
`tools/call`, a sign-in, GET /usage, GET /readyz; resumes Redis and times the first OK
call. Prints seconds and what each answered.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.drill_stack import production_shape  # noqa: E402

PASSWORD = "correct horse battery staple"


def tools_call(client: httpx.Client, key: str, request_id: int) -> str:
    answer = client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "geocode", "arguments": {"query": "Denver"}},
        },
        headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"},
    )
    if answer.status_code != 200:
        return f"HTTP {answer.status_code}"
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
    result: dict[str, Any] = json.loads(text)["result"]
    if result.get("isError"):
        return str(result["structuredContent"]["error"]["code"])
    return "OK"


def timed(what: str, call: Any) -> tuple[str, float, str]:
    started = time.monotonic()
    try:
        outcome = str(call())
    except httpx.HTTPError as exc:
        outcome = f"client gave up: {type(exc).__name__}"
    return what, time.monotonic() - started, outcome


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=Path(".geosvc"))
    parser.add_argument("--client-timeout-s", type=float, default=60.0)
    args = parser.parse_args()
    with production_shape(aof="everysec", geodata_dir=args.data_dir, workers=1) as stack:
        redis_process = stack.redis.process
        assert redis_process is not None
        with httpx.Client(base_url=stack.base_url, timeout=args.client_timeout_s) as client:
            email = f"stall-{secrets.token_hex(4)}@example.com"
            body = {"email": email, "password": PASSWORD}
            assert client.post("/auth/signup", json=body).status_code == 201
            key = client.post("/api-keys", json={"name": "bench"}).json()["plaintext"]
            assert tools_call(client, key, 1) == "OK"
            rows = []
            os.kill(redis_process.pid, signal.SIGSTOP)
            try:
                rows.append(timed("tools/call", lambda: tools_call(client, key, 2)))
                rows.append(
                    timed(
                        "POST /auth/signin",
                        lambda: client.post("/auth/signin", json=body).status_code,
                    )
                )
                rows.append(timed("GET /usage", lambda: client.get("/usage").status_code))
                rows.append(timed("GET /readyz", lambda: client.get("/readyz").status_code))
            finally:
                os.kill(redis_process.pid, signal.SIGCONT)
            resumed = time.monotonic()
            request_id = 3
            while tools_call(client, key, request_id) != "OK":
                request_id += 1
                if time.monotonic() - resumed > 60:
                    break
            rows.append(("first OK call after SIGCONT", time.monotonic() - resumed, ""))
    print(f"{'while Redis is paused':<30} {'seconds':>8}  answer")
    for what, seconds, outcome in rows:
        print(f"{what:<30} {seconds:>8.2f}  {outcome}")


if __name__ == "__main__":
    main()
