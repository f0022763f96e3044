"""The one error mapping: an unexpected exception is a 500 in the envelope, no trace leaks."""

from __future__ import annotations

import httpx

from app.main import create_app


async def test_unexpected_exceptions_are_500_in_the_envelope() -> None:
    app = create_app()

    @app.get("/_boom")
    def boom() -> None:
        raise RuntimeError("secret internals: /etc/passwd")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.get("/_boom")

    assert response.status_code == 500
    assert response.json() == {"error": {"code": "INTERNAL", "message": "Internal error"}}
    assert "secret" not in response.text
