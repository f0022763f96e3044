"""Issue 10, item 7: a call whose client disconnected before the answer is released, not
charged. A raw socket sends a tools/call over HTTP, the fake Census holds the call, and the
client resets the connection (SO_LINGER 0) mid-call."""

from __future__ import annotations

import json
import socket
import struct
import time
from urllib.parse import urlsplit

import redis

from app.kit.clock import period_of, utcnow
from tests.fakes.upstream import FakeUpstream
from tests.mcp.conftest import Account, Stack

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "get_average_income", "arguments": {"postal_code": "94103"}},
}


def send_call(url: str, api_key: str) -> socket.socket:
    parts = urlsplit(url)
    body = json.dumps(CALL).encode()
    raw = socket.create_connection((parts.hostname, parts.port), timeout=30)
    raw.sendall(
        (
            f"POST /mcp HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {api_key}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    )
    return raw


def read_response(raw: socket.socket) -> str:
    data = b""
    while b"\r\n\r\n" not in data:
        data += raw.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line.split(b":")[1]
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
    )
    while len(body) < length:
        body += raw.recv(65536)
    raw.close()
    return (head + b"\r\n\r\n" + body).decode()


def reset(raw: socket.socket) -> None:
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    raw.close()  # RST, not FIN


def wait_until(condition, what: str, timeout_s: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_call_whose_client_reset_the_connection_is_not_charged(
    stack: Stack, account: Account, upstream: FakeUpstream
) -> None:
    prefix = stack.server.env["GEOSVC_REDIS_KEY_PREFIX"]
    store = redis.Redis.from_url(stack.server.env["GEOSVC_REDIS_URL"], decode_responses=True)
    for key in store.scan_iter(match=f"{prefix}upstream:census:*", count=1000):
        store.delete(key)  # the call must reach the (slow) fake, not the answer cache
    counter = f"{prefix}usage:{{{account.user_id}}}:{period_of(utcnow())}"

    # The request shape is right: answered and charged when the client waits.
    answered = send_call(stack.server.url, account.api_key)
    reply = read_response(answered)
    assert reply.startswith("HTTP/1.1 200"), reply
    assert '"result"' in reply
    assert '"isError":true' not in reply.replace(" ", "")
    wait_until(lambda: store.hget(counter, "used") == "1", "the first call to be charged")
    for key in store.scan_iter(match=f"{prefix}upstream:census:*", count=1000):
        store.delete(key)

    upstream.fail("census", hang_s=2.0, count=1)
    before = upstream.requests("census")
    held = send_call(stack.server.url, account.api_key)
    wait_until(lambda: upstream.requests("census") > before, "the call to reach the upstream")
    assert store.zcard(counter + ":res") == 1  # reserved, in flight
    reset(held)

    wait_until(lambda: store.zcard(counter + ":res") == 0, "the reservation to end")
    assert store.hget(counter, "used") == "1"  # released, not committed
    # Still 1 once the held call would have finished (the fake answers after 2 s).
    wait_until(lambda: "client disconnected" in stack.server.log(), "the server to log it")
    assert store.hget(counter, "used") == "1"
    assert stack.ledger_count(account.user_id) <= 1
