"""How uvicorn serves the api: the protocol with our request bounds, and its options.

uvicorn's httptools protocol takes a request head of any size (httptools buffers a header
until its end, uvicorn keeps every header) and waits forever for an unfinished request:
50 clients sending 20 MB of headers grew an api process by 740 MB. `BoundedHttpTools`
counts a head's bytes as its URL and headers are parsed, and the bytes received while
it is incomplete (so a single endless header is caught too), and refuses, then closes,
as soon as either takes it over a bound, in the error envelope of every other answer:
- request line plus headers over GEOSVC_HTTP_MAX_HEADER_BYTES, or more headers than
  GEOSVC_HTTP_MAX_HEADERS: 431; a URL over GEOSVC_HTTP_MAX_URL_BYTES: 414;
- headers not complete GEOSVC_HTTP_HEADER_TIMEOUT_S after the connection opened or the
  previous answer was sent: 408;
- a body not complete GEOSVC_HTTP_BODY_TIMEOUT_S after its headers: the connection is
  closed (408 if nothing was answered yet). The body's size is RequestLimits' (413).
Idle keep-alive connections close after uvicorn's timeout_keep_alive (5 s). A header value
loses the whitespace after it as well as before it (RFC 9110, 5.5; httptools keeps it).

uvicorn writes an answer's head and its body in two socket writes: two packets, two
wake-ups of the client, and on loopback or a veth the kernel's receive path runs in the
api's time for each (a third of the api CPU of a refused call, issue 58). `_OneWrite`
holds a head until its body's first write, or the end of this turn of the event loop
(a streamed answer), and sends the two as one.

After a refused call (rate, concurrency, credits) the connection's next request is read
only once the wait the refusal announced is over (`hold_reading`: the app asks, with the
answer it gives at once). The refusal itself is not delayed, and a client that waits as
told never notices; one that ignores Retry-After on a few keep-alive connections sends
one request per wait on each instead of hundreds a second, so it no longer fills the
event loop that other tenants' calls share (issue 58). A refusal given from memory (the
key or account had been told to wait and was back inside that wait: `early`) holds for
a half to all of GEOSVC_HTTP_REFUSED_HOLD_MAX_S (1 s; spread, so that clients held
together do not come back together), and every hold lasts at most that, below client
timeouts and the keep-alive timeout. (Holds growing from the wait left, twice or four
times longer per early return, let a 100-connection flood's first seconds through:
bench/RESULTS.md.)
Never on a connection from a configured proxy (GEOSVC_FORWARDED_ALLOW_IPS): it carries
other clients' requests too. A client using one connection for several keys sees the
next key's call wait too (at most that second).
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from starlette.types import Scope
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.http.errors import error_body
from app.http.forwarded import is_configured_proxy
from app.kit.config import get_settings

PROTOCOL = "app.http.server:BoundedHttpTools"
KEEP_ALIVE_S = 5
# The error codes of the answers given before the app sees a request
_CODES = {
    400: "BAD_REQUEST",
    408: "REQUEST_TIMEOUT",
    414: "URI_TOO_LONG",
    431: "HEADERS_TOO_LARGE",
}


# The scope state's entry by which the app asks for a hold (`hold_reading`)
HOLD_READING = "geosvc.hold_reading_s"


def hold_reading(scope: Scope, seconds: float, *, early: bool) -> None:
    """Ask the server to read this connection's next request no sooner than `seconds`
    (the wait this answer's refusal announced) after this answer; `early`: the client had
    already been told to wait (see the module's docstring)."""
    scope.setdefault("state", {})[HOLD_READING] = (seconds, early)


class _Refused(Exception):
    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message


class BoundedHttpTools(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self._max_head = settings.http_max_header_bytes
        self._max_headers = settings.http_max_headers
        self._max_url = settings.http_max_url_bytes
        self._header_timeout = settings.http_header_timeout_s
        self._body_timeout = settings.http_body_timeout_s
        self._in_head = True
        self._head_bytes = 0
        self._url_bytes = 0
        self._header_count = 0
        self._parsed_head_bytes = 0  # URL, names and values: a head that came in one read
        self._refused: _Refused | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._hold_max = settings.http_refused_hold_max_s

    # --- deadlines -------------------------------------------------------------------

    def _arm(self, seconds: float, on_expiry: Any) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, on_expiry)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._head_bytes == 0:  # nothing asked (an idle connection): nothing to answer
            self.transport.close()
        else:
            self._answer_and_close(408, "Request Timeout", "Request headers not received in time")

    def _body_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            self._answer_and_close(408, "Request Timeout", "Request body not received in time")
        else:
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_OneWrite(transport, self.loop))  # type: ignore[arg-type]
        self._arm(self._header_timeout, self._headers_late)
        if self.client is not None and is_configured_proxy(self.client[0]):
            self._hold_max = 0.0

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        hold = self._hold_asked()
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if hold is not None and not self.pipeline:
            self._hold(*hold)
            return
        if self._deadline is None:
            self._arm(self._header_timeout, self._headers_late)

    # --- holds (see the module's docstring) ---------------------------------------------

    def _hold_asked(self) -> tuple[float, bool] | None:
        state = self.cycle.scope.get("state") if self.cycle is not None else None
        asked = state.pop(HOLD_READING, None) if isinstance(state, dict) else None
        return asked if asked is not None and asked[0] > 0 and self._hold_max > 0 else None

    def _hold(self, seconds: float, early: bool) -> None:
        if early:
            seconds = max(seconds, self._hold_max * random.uniform(0.5, 1))
        self.flow.pause_reading()
        # the header deadline starts again when reading does
        self._arm(min(self._hold_max, seconds), self._hold_over)

    def _hold_over(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        self._arm(self._header_timeout, self._headers_late)

    # --- count the head as it arrives -------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        # still in the head after this read (a read that ends a head may carry body bytes)
        if self._in_head and self._head_bytes > self._max_head and not self.transport.is_closing():
            self._answer_and_close(*self._head_too_large())

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._url_bytes = self._header_count = self._parsed_head_bytes = 0
        if self._deadline is None:  # a pipelined request: its own header deadline
            self._arm(self._header_timeout, self._headers_late)

    def on_url(self, url: bytes) -> None:
        self._url_bytes += len(url)
        self._parsed_head_bytes += len(url)
        if self._url_bytes > self._max_url:
            raise self._refuse(414, "URI Too Long", f"URL longer than {self._max_url} bytes")
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self._max_headers:
            raise self._refuse(
                431, "Request Header Fields Too Large", f"More than {self._max_headers} headers"
            )
        self._parsed_head_bytes += len(name) + len(value) + 4  # ": " and CRLF
        if self._parsed_head_bytes > self._max_head:
            raise self._refuse(*self._head_too_large())
        # httptools drops the whitespace before a value, not the one after it; a field value
        # excludes both (RFC 9110, 5.5), and the MCP SDK compares Mcp-Name with the body's
        super().on_header(name, value.rstrip(b" \t"))

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._arm(self._body_timeout, self._body_late)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()

    def _head_too_large(self) -> tuple[int, str, str]:
        message = f"Request headers larger than {self._max_head} bytes"
        return 431, "Request Header Fields Too Large", message

    def _refuse(self, status: int, reason: str, message: str) -> _Refused:
        self._refused = _Refused(status, reason, message)
        return self._refused

    # --- answers -----------------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to any parser error; a bound of ours raised it: say which."""
        refused, self._refused = self._refused, None
        if refused is None:
            self._answer_and_close(400, "Bad Request", msg)
        else:
            self._answer_and_close(refused.status, refused.reason, refused.message)

    def _answer_and_close(self, status: int, reason: str, message: str) -> None:
        self._disarm()
        code = _CODES.get(status, "BAD_REQUEST")
        body = json.dumps(error_body(code, message), separators=(",", ":")).encode()
        head = [f"HTTP/1.1 {status} {reason}".encode()]
        head += [name + b": " + value for name, value in self.server_state.default_headers]
        head += [
            b"content-type: application/json",
            b"content-length: " + str(len(body)).encode(),
            b"connection: close",
        ]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        self.transport.close()


class _OneWrite:
    """The connection's transport, but an answer's head goes out with its body's first
    write (or at the end of this turn of the loop, whichever is first): same bytes, same
    order, one packet. Everything else is the transport's own."""

    __slots__ = ("_transport", "_loop", "_held")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._held is not None:
            data, self._held = self._held + bytes(data), None
        elif isinstance(data, bytes) and data.startswith(b"HTTP/") and data.endswith(b"\r\n\r\n"):
            self._held = data
            self._loop.call_soon(self._flush)
            return
        self._transport.write(data)

    def _flush(self) -> None:
        if self._held is not None:
            data, self._held = self._held, None
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def uvicorn_options() -> dict[str, Any]:
    """What `geosvc api` and `geosvc dev` pass to uvicorn (besides the app and address)."""
    return {
        "http": PROTOCOL,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "server_header": False,  # no product name or version on any answer
        # X-Forwarded-* are the app's to apply, from GEOSVC_FORWARDED_ALLOW_IPS only
        # (app/http/forwarded.py): uvicorn's default trusts 127.0.0.1, anyone on the host.
        "proxy_headers": False,
    }
