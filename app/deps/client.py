"""The caller of a request, as the throttles and rate limits key it."""

from __future__ import annotations


def client_ip_of(client: tuple[str, int] | None) -> str:
    """The caller's address (a configured proxy's X-Forwarded-For already applied:
    app/http/forwarded.py)."""
    return client[0] if client else "unknown"
