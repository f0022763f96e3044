"""GEOSVC_DATABASE_URL naming a primary and its standbys (libpq's multi-host form, with
`target_session_attrs=read-write`): the engine hands libpq the whole host list, so after
a failover the pool's next connection finds the promoted standby (bench/pg_failover.py,
tests/drills/test_pg_failover.py), and pg_dump is given the same list."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from app.admin.backup import libpq_target
from app.kit.db import libpq_url, normalise_url

MULTI = "postgresql://geo:pw@db-a:5432,db-b:5433/geosvc?target_session_attrs=read-write"


def connect_args(url: str) -> dict[str, object]:
    engine = create_engine(normalise_url(url))
    _, kwargs = engine.dialect.create_connect_args(engine.url)
    return dict(kwargs)


class TestMultiHostUrl:
    def test_libpq_gets_every_host_and_the_session_attribute(self) -> None:
        args = connect_args(MULTI)
        assert args["host"] == "db-a,db-b"
        assert args["port"] == "5432,5433"
        assert args["target_session_attrs"] == "read-write"
        assert args["dbname"] == "geosvc"
        assert args["user"] == "geo"

    @pytest.mark.parametrize("prefix", ["postgres://", "postgresql+psycopg://"])
    def test_any_scheme_spelling(self, prefix: str) -> None:
        args = connect_args(MULTI.replace("postgresql://", prefix))
        assert args["host"] == "db-a,db-b"

    def test_a_single_host_is_left_as_it_was(self) -> None:
        url = "postgresql://geo@db-a:5432/geosvc?sslmode=require"
        assert normalise_url(url) == "postgresql+psycopg://geo@db-a:5432/geosvc?sslmode=require"

    def test_pg_dump_gets_libpq_host_list_without_the_password(self) -> None:
        target, env = libpq_target(MULTI)
        assert target == (
            "postgresql://geo@db-a:5432,db-b:5433/geosvc?target_session_attrs=read-write"
        )
        assert env["PGPASSWORD"] == "pw"

    def test_libpq_url_of_one_host(self) -> None:
        assert libpq_url("postgresql+psycopg://geo@db-a:5432/geosvc") == (
            "postgresql://geo@db-a:5432/geosvc"
        )

    def test_pg_dump_argv_never_carries_the_password(self) -> None:
        target, env = libpq_target("postgresql://geo:s3cret@db-a:5432/geosvc")
        assert target == "postgresql://geo@db-a:5432/geosvc"
        assert env["PGPASSWORD"] == "s3cret"
