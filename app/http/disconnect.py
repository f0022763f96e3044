"""Notice a client that went away while its request was being answered, and cancel the
work done for it (a metered call is then released, not charged).

Uvicorn does not cancel a request whose client disconnected: it only answers the app's
next `receive()` with `http.disconnect`. A watcher keeps listening on the connection once
the request's body is read and sets the request's `client_gone` event; the handler races
its work against it (`run_unless_client_gone`). `watch_client` is that watcher for a
request whose body the handler has read (or that has none); the MCP edge has its own,
which reads the body for the SDK (`app.mcp.disconnect.ClientGoneWatch`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
from starlette.requests import Request

T = TypeVar("T")
STATE_KEY = "client_gone"


class ClientGone(Exception):
    """The caller disconnected before the answer was sent."""


@asynccontextmanager
async def watch_client(request: Request) -> AsyncIterator[None]:
    """Listen for the client's disconnect while the block runs (read the body first).

    A task of its own rather than a task group around the block, whose errors would then
    reach the caller wrapped in an ExceptionGroup."""
    gone = anyio.Event()
    request.scope.setdefault("state", {})[STATE_KEY] = gone
    receive = request.receive

    async def listen() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    listener = asyncio.create_task(listen())
    try:
        yield
    finally:
        listener.cancel()


async def run_unless_client_gone(request: Any, work: Callable[[], Awaitable[T]]) -> T:
    """`work()`, cancelled (raising ClientGone) if the request's client disconnects first."""
    gone = request.scope.get("state", {}).get(STATE_KEY) if isinstance(request, Request) else None
    if gone is None:
        return await work()
    outcome: list[T] = []
    failure: list[Exception] = []

    async def run(scope: anyio.CancelScope) -> None:
        try:  # outside the task group, so the caller sees the error itself, not a group
            outcome.append(await work())
        except Exception as exc:
            failure.append(exc)
        scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(run, group.cancel_scope)
        await gone.wait()
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    if not outcome:
        raise ClientGone
    return outcome[0]
