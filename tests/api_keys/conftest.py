from __future__ import annotations

import httpx

from tests.support.factories import sign_up


def create_key(client: httpx.Client, name: str = "laptop") -> dict:
    response = client.post("/api-keys", json={"name": name})
    assert response.status_code == 201, response.text
    return dict(response.json())


def key_ids(client: httpx.Client) -> list[str]:
    response = client.get("/api-keys")
    assert response.status_code == 200, response.text
    return [key["keyId"] for key in response.json()["keys"]]


def signed_up(client: httpx.Client) -> str:
    return str(sign_up(client)["userId"])
