"""Plain factory functions for tests."""

from __future__ import annotations

import secrets

import httpx

PASSWORD = "correct horse battery"


def unique_email(prefix: str = "user") -> str:
    return f"{prefix}-{secrets.token_hex(6)}@example.com"


def sign_up(client: httpx.Client, *, email: str | None = None, name: str | None = None) -> dict:
    body: dict[str, str] = {"email": email or unique_email(), "password": PASSWORD}
    if name is not None:
        body["name"] = name
    response = client.post("/auth/signup", json=body)
    assert response.status_code == 201, response.text
    return response.json()
