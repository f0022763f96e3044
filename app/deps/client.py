"""The caller of a request, as the throttles and rate limits key it."""

from __future__ import annotations


def client_ip_of(client: tuple[str, int] | None) -> str:
    """The caller's address (uvicorn already applied trusted X-Forwarded-For)."""
    return client[0] if client else "unknown"
