"""A database that stops taking writes under the app, as a primary demoted to a standby in
a switchover does (or an address still pointing at it): writes answer 503 UNAVAILABLE,
retryable, never a 500. A standby answers a write with SQLSTATE 25006
(read_only_sql_transaction); here the database is made read-only for new sessions and the
server's connections are ended, as a demotion ends them. The failover itself (a primary
killed, its standby promoted): tests/drills/test_pg_failover.py."""

from __future__ import annotations

from pathlib import Path

import httpx
import psycopg
import pytest

from tests.support.factories import sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import start_live_server
from tests.support.services import POSTGRES_ADMIN_URL, fresh_postgres_database


class TestPrimaryDemoted:
    def test_a_write_on_a_read_only_server_is_a_retryable_503(
        self, backend: Backend, tmp_path: Path
    ) -> None:
        if backend.name != "postgres":
            pytest.skip("PostgreSQL only: a standby refusing writes")
        with fresh_postgres_database() as url:
            server = start_live_server(backend.env(GEOSVC_DATABASE_URL=url), tmp_path / "api.log")
            try:
                with httpx.Client(base_url=server.url, timeout=30) as client:
                    sign_up(client)
                    origin = {"Origin": server.url}
                    assert client.put("/usage/cap", json={"cap": 50}, headers=origin).is_success
                    demote(url.rsplit("/", 1)[1])
                    answer = client.put("/usage/cap", json={"cap": 60}, headers=origin)
                    assert answer.status_code == 503, answer.text
                    error = answer.json()["error"]
                    assert error["code"] == "UNAVAILABLE", error
                    assert error["retryable"] is True, error
                    assert "retry-after" in answer.headers
                    assert client.get("/usage").status_code == 200  # reads still work
            finally:
                server.stop()


def demote(database: str) -> None:
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{database}" SET default_transaction_read_only = on')
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        )
