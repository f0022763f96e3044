"""A reverse proxy on 127.0.0.1 that adds headers to every request it forwards.

For clients that cannot send our API key themselves, such as the MCP conformance suite
(it has no header option). Everything else passes as it came: the method, path, query,
body and the client's own Host and Origin (the suite's DNS-rebinding scenario sends a
foreign Host and expects the server to refuse it), and the answer is streamed back
unchanged (status, headers, raw body).

`python -m tests.support.header_proxy --upstream http://127.0.0.1:8000 --port 8100` serves
it as its own process; the header to add comes from the environment, never the command
line: `PROXY_AUTHORIZATION="Bearer svc_live_ak_..."`.
"""

from __future__ import annotations

import argparse
import os
import threading
from typing import Any

import httpx
import uvicorn
from starlette.types import Message, Receive, Scope, Send

from app.kit.embedded_redis import free_port

# Hop-by-hop headers (RFC 9110, 7.6.1) and the framing the proxy sets anew on each side.
NOT_FORWARDED = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"te",
    b"trailer",
    b"transfer-encoding",
    b"upgrade",
    b"content-length",
}


class HeaderProxyApp:
    """The ASGI app: forwards each request to `upstream` with `added` headers set."""

    def __init__(self, upstream: str, added: dict[str, str]) -> None:
        self.upstream = upstream.rstrip("/")
        self.added = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in added.items()]
        self.client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._forward(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # No timeout: an SSE stream may stay open as long as the client wants it.
                self.client = httpx.AsyncClient(timeout=None)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.client is not None:
                    await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.client is not None, "the proxy's lifespan did not start"
        body = await _read_body(receive)
        replaced = {name for name, _ in self.added}
        # httptools keeps a value's trailing whitespace, which h11 then refuses to send;
        # a field value is defined without it (RFC 9110, 5.5)
        headers = [
            (name, value.strip(b" \t"))
            for name, value in scope["headers"]
            if name not in NOT_FORWARDED and name not in replaced
        ] + self.added
        url = self.upstream + scope["raw_path"].decode("latin-1")
        if scope["query_string"]:
            url += "?" + scope["query_string"].decode("latin-1")
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:  # the server is down: say so, as a gateway does
            message = f"header proxy: {type(exc).__name__} from {self.upstream}".encode()
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": message})
            return
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": [
                        (name, value)
                        for name, value in response.headers.raw
                        if name.lower() not in NOT_FORWARDED - {b"content-length"}
                    ],
                }
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _config(app: HeaderProxyApp, port: int) -> uvicorn.Config:
    # Neither a Server nor a Date header of its own: the upstream's answer passes unchanged.
    return uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        server_header=False,
        date_header=False,
    )


class HeaderProxy:
    """Runs the proxy with uvicorn in a background thread of the test process."""

    def __init__(self, upstream: str, added: dict[str, str]) -> None:
        self.port = free_port()
        self._server = uvicorn.Server(_config(HeaderProxyApp(upstream, added), self.port))
        self._thread = threading.Thread(target=self._server.run, daemon=True, name="header-proxy")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HeaderProxy:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the header proxy did not start")
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    def __enter__(self) -> HeaderProxy:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8000")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    args = parser.parse_args()
    authorization = os.environ.get("PROXY_AUTHORIZATION")
    if not authorization:
        parser.error('set PROXY_AUTHORIZATION, e.g. "Bearer svc_live_ak_..."')
    port = args.port or free_port()
    print(f"forwarding http://127.0.0.1:{port} -> {args.upstream}", flush=True)
    uvicorn.Server(
        _config(HeaderProxyApp(args.upstream, {"Authorization": authorization}), port)
    ).run()


if __name__ == "__main__":
    main()
