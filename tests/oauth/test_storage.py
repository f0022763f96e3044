"""What the database keeps of OAuth secrets (hashes only), what the logs show of them
(nothing), and the limits kept in rows: code lifetime, token lifetime and audience."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from app.kit.clock import utcnow
from app.observability.logs import redact
from tests.oauth.conftest import Host, approve, call_mcp, refused_within, tokens_for
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer

TABLES = ("oauth_clients", "oauth_grants", "oauth_codes", "oauth_tokens")


@pytest.fixture
def database(backend: Backend) -> Iterator[Engine]:
    engine = create_engine(backend.database_url)
    yield engine
    engine.dispose()


def stored_hash(live_server: LiveServer, secret: str) -> str:
    key = live_server.env["GEOSVC_OAUTH_SIGNING_KEY"].encode()
    return hmac.new(key, secret.encode(), hashlib.sha256).hexdigest()


def everything_stored(database: Engine) -> str:
    with database.connect() as connection:
        rows = [
            repr(tuple(row))
            for table in TABLES
            for row in connection.execute(text(f"SELECT * FROM {table}"))
        ]
    return "\n".join(rows)


def test_secrets_are_kept_only_as_hashes_and_never_logged(
    host: Host, person: httpx.Client, live_server: LiveServer, database: Engine
) -> None:
    assert host.register(token_endpoint_auth_method="client_secret_post").status_code == 201
    answer = approve(person, host.authorization_url())
    tokens = host.exchange(answer["code"], client_secret=host.client_secret or "").json()
    secrets = [answer["code"], tokens["access_token"], tokens["refresh_token"]]
    secrets.append(host.client_secret or "")

    stored = everything_stored(database)
    log = live_server.log()

    for secret in secrets:
        assert secret
        assert secret not in stored
        assert secret not in log
    assert stored_hash(live_server, tokens["access_token"]) in stored
    assert stored_hash(live_server, answer["code"]) in stored


def test_log_redaction_hides_tokens_and_codes() -> None:
    line = (
        "GET /cb?code=abc123&state=s svc_at_AAAA svc_rt_BBBB svc_ac_CCCC "
        "svc_live_ak_key1_DDDD /token?refresh_token=EEEE&client_secret=FFFF"
    )
    clean = redact(line)
    for secret in ("abc123", "AAAA", "BBBB", "CCCC", "DDDD", "EEEE", "FFFF"):
        assert secret not in clean
    assert "state=s" in clean


def test_a_code_is_short_lived(
    host: Host, person: httpx.Client, live_server: LiveServer, database: Engine
) -> None:
    code = approve(person, host.authorization_url())["code"]
    with database.begin() as connection:
        connection.execute(
            text("UPDATE oauth_codes SET expires_at = :past WHERE code_hash = :hash"),
            {"past": utcnow() - timedelta(seconds=1), "hash": stored_hash(live_server, code)},
        )

    response = host.exchange(code)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("access_expires_at", utcnow() - timedelta(seconds=1), "expired"),
        ("resource", "https://other.example/mcp", "not issued for this server"),
    ],
)
def test_an_expired_or_foreign_token_is_refused(
    host: Host,
    person: httpx.Client,
    live_server: LiveServer,
    database: Engine,
    column: str,
    value: object,
    reason: str,
) -> None:
    access = tokens_for(host, person)["access_token"]
    assert call_mcp(live_server.url, f"Bearer {access}").status_code == 200
    with database.begin() as connection:
        connection.execute(
            text(f"UPDATE oauth_tokens SET {column} = :value WHERE access_token_hash = :hash"),
            {"value": value, "hash": stored_hash(live_server, access)},
        )

    response = refused_within(live_server.url, f"Bearer {access}")

    assert response.status_code == 401
    assert reason in response.json()["error"]["message"]
