"""Notice a client that went away while its request was being answered, and cancel the
work done for it (a metered call is then released, not charged).

Uvicorn does not cancel a request whose client disconnected: it only answers the app's
next `receive()` with `http.disconnect`. A watcher keeps listening on the connection once
the request's body is read and sets the request's `client_gone` event; the handler races
its work against it (`run_unless_client_gone`). `watch_client` is that watcher for a
request whose body the handler has read (or that has none); the MCP edge has its own,
which reads the body for the SDK (`app.mcp.disconnect.ClientGoneWatch`).

The work runs in the handler's own task under a cancel scope that the disconnect cancels,
not in a task of its own raced against the event: a task group, a task and their
cancellation per call were about 0.17 ms of a tool call's 3 ms in the api.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import anyio
from starlette.requests import Request

T = TypeVar("T")
STATE_KEY = "client_gone"


class ClientGone(Exception):
    """The caller disconnected before the answer was sent."""


class ClientGoneSignal:
    """Set once the request's client disconnected: wakes `wait()`ers and cancels the
    scopes racing it (`run_unless_client_gone`)."""

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._scopes: set[anyio.CancelScope] = set()

    def set(self) -> None:
        self._event.set()
        for scope in list(self._scopes):  # a copy: each scope's exit discards it
            scope.cancel()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    @contextmanager
    def cancelling(self, scope: anyio.CancelScope) -> Iterator[None]:
        """Cancel `scope` when the client goes (at once if it is gone already)."""
        if self.is_set():
            scope.cancel()
        self._scopes.add(scope)
        try:
            yield
        finally:
            self._scopes.discard(scope)


@asynccontextmanager
async def watch_client(request: Request) -> AsyncIterator[None]:
    """Listen for the client's disconnect while the block runs (read the body first).

    A task of its own rather than a task group around the block, whose errors would then
    reach the caller wrapped in an ExceptionGroup."""
    gone = ClientGoneSignal()
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
    if not isinstance(gone, ClientGoneSignal):
        return await work()
    with anyio.CancelScope() as scope, gone.cancelling(scope):
        return await work()
    raise ClientGone  # only a cancelled scope gets here: work() did not finish
