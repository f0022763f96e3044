"""The allow-lists of Host and Origin values in front of /mcp (app/mcp/transport_checks.py);
the refusals themselves are tested on a live server in tests/mcp/test_tools.py."""

from __future__ import annotations

import pytest

from app.mcp.transport_checks import AllowList, _headers

HOSTS = AllowList(["127.0.0.1:*", "localhost:*", "[::1]:*", "geo.example.com"])
ORIGINS = AllowList(["http://localhost:*", "https://geo.example.com"])


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8000", "localhost:1", "LocalHost:65535", "[::1]:8000", "geo.example.com",
     "GEO.example.COM"],
)  # fmt: skip
def test_allowed_hosts(host: str) -> None:
    assert HOSTS.allows(host)


@pytest.mark.parametrize(
    "host",
    [
        "",
        "localhost",  # a pattern with :* asks for a port
        "localhost:",
        "localhost:evil.example",  # the SDK's prefix match let this through
        "localhost:80:80",
        "localhost:123456",
        "127.0.0.1.evil.example:8000",
        "geo.example.com:8443",
        "evil.example",
        "[::1]",
    ],
)
def test_refused_hosts(host: str) -> None:
    assert not HOSTS.allows(host)


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:5173", True),
        ("https://geo.example.com", True),
        ("http://localhost", False),
        ("https://localhost:5173", False),
        ("http://localhost:5173.evil.example", False),
        ("https://geo.example.com.evil.example", False),
        ("null", False),
    ],
)
def test_origins(origin: str, allowed: bool) -> None:
    assert ORIGINS.allows(origin) is allowed


def test_headers_read_are_the_first_of_each_in_any_case() -> None:
    scope = {
        "headers": [
            (b"Host", b"geo.example.com"),
            (b"host", b"evil.example"),
            (b"x-not-read", b"\xff\xfe"),
            (b"Content-Type", b"application/json"),
        ]
    }
    assert _headers(scope) == {"host": "geo.example.com", "content-type": "application/json"}
