"""No plaintext key, nor its secret part, in any column of any table or in the server log."""

from __future__ import annotations

import hashlib
import hmac

import httpx
from sqlalchemy import MetaData, create_engine, select

from app.api_keys.verify import verify_bearer
from app.kit.db import normalise_url
from tests.api_keys.conftest import create_key
from tests.support.factories import sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer


def every_value_in_the_database(database_url: str) -> list[str]:
    """Every cell of every table, as text (reflected, so new tables are covered too)."""
    engine = create_engine(normalise_url(database_url))
    try:
        metadata = MetaData()
        metadata.reflect(engine)
        values: list[str] = []
        with engine.connect() as connection:
            for table in metadata.sorted_tables:
                for row in connection.execute(select(table)):
                    values.extend(str(value) for value in row)
        return values
    finally:
        engine.dispose()


def test_plaintext_is_stored_nowhere(
    use_backend: Backend, http: httpx.Client, live_server: LiveServer
) -> None:
    user_id = sign_up(http)["userId"]
    created = [create_key(http, f"key {n}") for n in range(3)]
    for key in created:
        assert verify_bearer(f"Bearer {key['plaintext']}").user_id == user_id
        # the server sees the bearer header too (it is refused on the control plane)
        assert http.get("/me", headers={"Authorization": f"Bearer {key['plaintext']}"}).is_success
    assert http.delete(f"/api-keys/{created[0]['key']['keyId']}").status_code == 204

    values = every_value_in_the_database(use_backend.database_url)
    log = live_server.log()

    pepper = live_server.env["GEOSVC_SECRET_PEPPER"].encode()
    for key in created:
        secret = key["plaintext"].rsplit("_", 1)[1]
        assert not any(secret in value for value in values)
        assert not any(key["plaintext"] in value for value in values)
        assert secret not in log
        # the scan does read the keys table: the secret's HMAC is there
        digest = hmac.new(pepper, secret.encode(), hashlib.sha256).hexdigest()
        assert digest in values
    assert created[0]["key"]["keyId"] in log  # the log is captured (DELETE /api-keys/<id>)
