"""Notice a client that went away while its MCP request was being answered.

Uvicorn does not cancel a request whose client disconnected: it only answers the app's
next `receive()` with `http.disconnect`, and the MCP SDK never asks again once it has
the body. So a tool call whose caller reset the connection would run to the end and be
charged for an answer nobody gets. `ClientGoneWatch` reads the (size-limited) body
itself, hands it to the SDK, and keeps listening on the connection; on `http.disconnect`
it sets the request's `client_gone` event, which the tool handler races against the
call (`app.http.disconnect.run_unless_client_gone`): the call is cancelled and its credit
released.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.disconnect import STATE_KEY, ClientGone, ClientGoneSignal, run_unless_client_gone

__all__ = ["ClientGone", "ClientGoneWatch", "run_unless_client_gone"]


class ClientGoneWatch:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        gone = ClientGoneSignal()
        scope.setdefault("state", {})[STATE_KEY] = gone
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def listen() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        # A task of its own rather than a task group: cheaper on every call.
        listener = asyncio.create_task(listen())
        try:
            await self.app(scope, replay, send)
        finally:
            listener.cancel()
