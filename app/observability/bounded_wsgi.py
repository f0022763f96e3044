"""The worker exporter's HTTP server, with the api's request bounds (app/http/server.py).

wsgiref alone serves one connection at a time, reads up to 100 header lines of 64 KiB
each and waits forever for them: one client that never finishes its headers stops every
scrape, and 50 of them grew a worker by 500 MB. Here each connection has its own thread,
its request line and headers together may take GEOSVC_HTTP_MAX_HEADER_BYTES (431 above,
414 when the request line alone is over) and must arrive within
GEOSVC_HTTP_HEADER_TIMEOUT_S of the connection (408 after).
"""

from __future__ import annotations

import socket
import time
from typing import Any

from prometheus_client.exposition import ThreadingWSGIServer, _SilentHandler

from app.kit.config import get_settings


class _HeadRefused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class _BoundedHead:
    """The request's read side: lines under a byte budget and a deadline while the head is
    read, then plain reads with the body timeout on the socket."""

    def __init__(self, raw: Any, connection: socket.socket, budget: int, timeout_s: float):
        self._raw = raw
        self._connection = connection
        self._left = budget
        self._deadline = time.monotonic() + timeout_s
        self._in_head = True
        self._first_line = True

    def readline(self, limit: int = -1) -> bytes:
        if not self._in_head:
            return bytes(self._raw.readline(limit))
        remaining_s = self._deadline - time.monotonic()
        if remaining_s <= 0:
            raise _HeadRefused(408, "Request Timeout")
        self._connection.settimeout(remaining_s)
        size = self._left + 1 if limit < 0 else min(limit, self._left + 1)
        try:
            line = bytes(self._raw.readline(size))
        except TimeoutError:
            raise _HeadRefused(408, "Request Timeout") from None
        self._left -= len(line)
        if self._left < 0:
            if self._first_line:
                raise _HeadRefused(414, "URI Too Long")
            raise _HeadRefused(431, "Request Header Fields Too Large")
        self._first_line = False
        return line

    def head_complete(self, body_timeout_s: float) -> None:
        self._in_head = False
        self._connection.settimeout(body_timeout_s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class BoundedHandler(_SilentHandler):
    rfile: Any

    def setup(self) -> None:
        super().setup()
        settings = get_settings()
        self._body_timeout_s = settings.http_body_timeout_s
        self.rfile = _BoundedHead(
            self.rfile,
            self.connection,
            settings.http_max_header_bytes,
            settings.http_header_timeout_s,
        )

    def handle(self) -> None:
        try:
            super().handle()
        except _HeadRefused as refused:
            self._refuse(refused)

    def parse_request(self) -> bool:
        complete = super().parse_request()
        self.rfile.head_complete(self._body_timeout_s)
        return complete

    def _refuse(self, refused: _HeadRefused) -> None:
        self.close_connection = True
        body = f"{refused.status} {refused.reason}\n".encode()
        head = (
            f"HTTP/1.1 {refused.status} {refused.reason}\r\n"
            f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n"
        )
        try:
            self.wfile.write(head.encode() + body)
        except OSError:  # the client is gone: nothing to tell it
            pass


class BoundedWSGIServer(ThreadingWSGIServer):
    """A thread per connection (daemon threads: they never delay the worker's exit)."""
