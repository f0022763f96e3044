"""Plain factory functions for tests."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

import httpx
from sqlmodel import Session

from app.kit.clock import period_of, utcnow
from app.metering.ledger import record_events
from app.metering.schemas import UsageEventIn

PASSWORD = "correct horse battery"


def unique_email(prefix: str = "user") -> str:
    return f"{prefix}-{secrets.token_hex(6)}@example.com"


def sign_up(client: httpx.Client, *, email: str | None = None, name: str | None = None) -> dict:
    body: dict[str, str] = {"email": email or unique_email(), "password": PASSWORD}
    if name is not None:
        body["name"] = name
    response = client.post("/auth/signup", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def poll(
    request: Callable[[], httpx.Response], *, until: int, deadline_s: float = 15.0
) -> httpx.Response:
    """Repeat `request` until it answers `until` (work the server does after its answer,
    e.g. a sign-up with e-mail verification); the last answer after the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        response = request()
        if response.status_code == until or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def record_calls(session: Session, user_id: str, calls: int, *, period: str | None = None) -> None:
    """`calls` successful geocode calls of `user_id` in the ledger (this month by default)."""
    now = utcnow()
    events = [
        UsageEventIn(
            call_id=secrets.token_hex(8),
            user_id=user_id,
            tool="geocode",
            period=period or period_of(now),
            created_at=now,
        )
        for _ in range(calls)
    ]
    record_events(session, events)
    session.commit()


def mcp_headers(key: str) -> dict[str, str]:
    """What a Streamable HTTP client sends with a call: the key, both answer types."""
    return {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}


def geocode_call(request_id: int, query: str = "Denver") -> dict[str, Any]:
    """A bare MCP `tools/call` of geocode, as JSON-RPC."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "geocode", "arguments": {"query": query}},
    }


def mcp_initialize(
    base_url: str, key: str = "", *, authorization: str | bytes | None = None
) -> httpx.Response:
    """A bare MCP `initialize` with `key` as the bearer (or the `Authorization` header as
    given): 200 when the credential verifies."""
    header = f"Bearer {key}" if authorization is None else authorization
    return httpx.post(
        f"{base_url}/mcp",
        headers={"Authorization": header, "Accept": "application/json, text/event-stream"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tests", "version": "1"},
            },
        },
        timeout=30,
    )
