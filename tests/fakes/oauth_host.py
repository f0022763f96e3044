"""The outside world of an OAuth sign-in, as real HTTP servers on 127.0.0.1: the host's
redirect URI (where the browser lands with the code, as a native MCP host's loopback
listener) and the web server of a client's metadata document (Client ID Metadata
Documents), whose answer a test sets."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Answer:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


class _Server:
    """A ThreadingHTTPServer on a free port that records GETs and answers `answer`."""

    def __init__(self, port: int = 0) -> None:
        self.requests: list[str] = []
        self.hosts: list[str] = []  # each request's Host header
        self.answer = Answer()
        self.arrived = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                outer.requests.append(self.path)
                outer.hosts.append(self.headers.get("Host", ""))
                answer = outer.answer
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
                outer.arrived.set()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> _Server:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class CallbackServer(_Server):
    """The host's loopback redirect URI: remembers the query it was sent back with."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.answer = Answer(body=b"<p>You can close this window.</p>", headers={})
        self.answer.headers["Content-Type"] = "text/html"

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    def last_query(self) -> dict[str, str]:
        """The query of the last visit to /callback (a browser also asks for a favicon)."""
        visits = [path for path in self.requests if urlsplit(path).path == "/callback"]
        query = parse_qs(urlsplit(visits[-1]).query)
        return {name: values[0] for name, values in query.items()}


class MetadataServer(_Server):
    """Serves one client metadata document at /client.json (set it with `publish`)."""

    @property
    def client_id(self) -> str:
        return f"http://127.0.0.1:{self.port}/client.json"

    def publish(self, document: dict[str, Any], **headers: str) -> None:
        self.answer = Answer(
            body=json.dumps(document).encode(),
            headers={"Content-Type": "application/json", **headers},
        )
