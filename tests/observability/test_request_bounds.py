"""Bounded requests (issue 21, item 1) on the api as deployed (`geosvc api`, protocol
app/http/server.py) and on the worker's metrics port (app/observability/bounded_wsgi.py),
over raw sockets. The observed stack runs with GEOSVC_HTTP_HEADER_TIMEOUT_S=3."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.observability.conftest import AUTH, HEADER_TIMEOUT_S, ObservedStack

MB = 1024 * 1024


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants (uvicorn's workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        total += int(match.group(1)) if match else 0
    return total


def read_answer(sock: socket.socket, deadline_s: float) -> bytes:
    """Everything the server sends until it closes, or until the deadline."""
    data = b""
    deadline = time.monotonic() + deadline_s
    while True:
        left = max(deadline - time.monotonic(), 0.05)  # at least a look at what arrived
        readable, _, _ = select.select([sock], [], [], left)
        if not readable:
            break
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:  # closed with our unread bytes in its buffer
            return data + b"<closed>"
        if not chunk:
            return data + b"<closed>"
        data += chunk
    return data


def send_huge_head(url: str, path: bytes, size: int) -> socket.socket:
    """Start a request whose headers go on for `size` bytes (a few at a time, never ended);
    stop sending once the server answers or closes."""
    sock = socket.create_connection(address(url), timeout=10)
    sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n")
    line = b"X-Filler: " + b"a" * 4000 + b"\r\n"
    sent = 0
    while sent < size:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        try:
            sock.sendall(line)
        except OSError:  # closed by the server
            break
        sent += len(line)
    return sock


def test_api_sends_no_server_header(observed: ObservedStack) -> None:
    response = httpx.get(f"{observed.server.url}/healthz", timeout=10)
    assert response.status_code == 200
    assert "server" not in response.headers


def flood_of_huge_heads(pid: int, url: str, path: bytes) -> tuple[list[bytes], int]:
    """20 connections each offering a 1 MB request head to `url`: their answers, and how
    many KiB the process `pid` (with its children) grew while they were open."""
    before = tree_rss_kib(pid)
    sockets = [send_huge_head(url, path, MB) for _ in range(20)]
    try:
        deadline = time.monotonic() + 10
        answers = [read_answer(sock, deadline - time.monotonic()) for sock in sockets]
        return answers, tree_rss_kib(pid) - before
    finally:
        for sock in sockets:
            sock.close()


class TestApiBounds:
    def test_huge_headers_are_refused_and_do_not_grow_the_api(
        self, observed: ObservedStack
    ) -> None:
        httpx.get(f"{observed.server.url}/healthz", timeout=10)  # warm
        answers, grown_kib = flood_of_huge_heads(
            observed.server.process.pid, observed.server.url, b"/healthz"
        )
        for answer in answers:
            assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
            assert answer.endswith(b"<closed>")
        # 20 MB were offered; a few MB of slack for allocator noise
        assert grown_kib < 8 * 1024, f"api grew by {grown_kib} KiB"

    @pytest.mark.parametrize(("filler", "status"), [(30_000, b"200"), (100_000, b"431")])
    def test_a_head_that_comes_in_one_read_is_bounded_too(
        self, observed: ObservedStack, filler: int, status: bytes
    ) -> None:
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * filler + b"\r\n\r\n"
        with socket.create_connection(address(observed.server.url), timeout=10) as sock:
            sock.sendall(head)  # the 32 KiB bound (settings) lies between the two
            answer = read_answer(sock, 10)
        assert answer.startswith(b"HTTP/1.1 " + status + b" "), answer[:200]
        if status == b"431":
            body = answer.split(b"\r\n\r\n", 1)[1].removesuffix(b"<closed>")
            assert json.loads(body)["error"]["code"] == "HEADERS_TOO_LARGE"

    def test_a_malformed_request_is_400_in_the_error_envelope(
        self, observed: ObservedStack
    ) -> None:
        with socket.create_connection(address(observed.server.url), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost x\r\n\r\n")  # no colon
            answer = read_answer(sock, 10)
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
        assert b"content-type: application/json" in answer.lower()
        body = answer.split(b"\r\n\r\n", 1)[1].removesuffix(b"<closed>")
        assert json.loads(body)["error"]["code"] == "BAD_REQUEST"

    def test_too_many_headers_is_431(self, observed: ObservedStack) -> None:
        headers = b"".join(b"X-H%d: 1\r\n" % i for i in range(150))
        with socket.create_connection(address(observed.server.url), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
            assert read_answer(sock, 10).startswith(b"HTTP/1.1 431 ")

    def test_a_long_url_is_414(self, observed: ObservedStack) -> None:
        with socket.create_connection(address(observed.server.url), timeout=10) as sock:
            sock.sendall(b"GET /healthz?" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_answer(sock, 10).startswith(b"HTTP/1.1 414 ")

    def test_headers_that_stall_are_cut_off_with_408(self, observed: ObservedStack) -> None:
        with socket.create_connection(address(observed.server.url), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ")
            answer = read_answer(sock, HEADER_TIMEOUT_S + 10)
            waited = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert answer.endswith(b"<closed>")
        assert waited < HEADER_TIMEOUT_S + 5

    def test_a_body_that_stalls_is_cut_off(self, observed: ObservedStack) -> None:
        """Counted from the end of the headers; GEOSVC_HTTP_BODY_TIMEOUT_S=4 here."""
        with socket.create_connection(address(observed.server.url), timeout=10) as sock:
            sock.sendall(
                b"POST /auth/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            answer = read_answer(sock, 20)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert answer.endswith(b"<closed>")

    def test_an_ordinary_request_with_a_body_still_works(self, observed: ObservedStack) -> None:
        body = {"email": "nobody@example.com", "password": "x" * 100_000}
        response = httpx.post(f"{observed.server.url}/auth/signin", json=body, timeout=10)
        assert response.status_code in (401, 422), response.text


class TestWorkerExporterBounds:
    def test_huge_headers_are_refused_and_do_not_grow_the_worker(
        self, observed: ObservedStack
    ) -> None:
        answers, grown_kib = flood_of_huge_heads(
            observed.worker.process.pid, observed.worker_metrics_url, b"/metrics"
        )
        for answer in answers:
            assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert grown_kib < 8 * 1024, f"worker grew by {grown_kib} KiB"

    def test_a_stalled_client_is_cut_off_and_blocks_no_scrape(
        self, observed: ObservedStack
    ) -> None:
        with socket.create_connection(address(observed.worker_metrics_url), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Half: ")
            # meanwhile Prometheus still gets its answer
            scrape = httpx.get(observed.worker_metrics_url, headers=AUTH, timeout=5)
            assert scrape.status_code == 200
            answer = read_answer(sock, HEADER_TIMEOUT_S + 10)
            waited = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert waited < HEADER_TIMEOUT_S + 5

    def test_a_long_request_line_is_414(self, observed: ObservedStack) -> None:
        with socket.create_connection(address(observed.worker_metrics_url), timeout=10) as sock:
            sock.sendall(b"GET /metrics?" + b"a" * 40_000 + b" HTTP/1.1\r\n")
            assert read_answer(sock, 10).startswith(b"HTTP/1.1 414 ")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads RSS from /proc")
def test_rss_reader_sees_this_process() -> None:
    assert tree_rss_kib(os.getpid()) > 1024
