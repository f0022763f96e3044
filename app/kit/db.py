"""Engine and sessions. The request or task that owns a session commits; services only flush."""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.pool import NullPool
from sqlmodel import Session, create_engine

from app.kit.config import get_settings


def normalise_url(url: str) -> str:
    """Accept plain postgresql:// URLs and use the psycopg 3 driver we ship. A libpq
    multi-host URL (`postgresql://u@h1:5432,h2:5432/db?target_session_attrs=read-write`,
    a primary and its standbys) becomes SQLAlchemy's form of it (`?host=h1:5432&host=...`),
    which it hands to libpq as the same host list."""
    for prefix in ("postgresql://", "postgres://", "postgresql+psycopg://"):
        if url.startswith(prefix):
            return _multi_host_query("postgresql+psycopg://" + url[len(prefix) :])
    return url


def _multi_host_query(url: str) -> str:
    scheme, rest = url.split("://", 1)
    netloc, slash, tail = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if "," not in hosts:
        return url
    path, question, query = tail.partition("?")
    listed = "&".join(f"host={host}" for host in hosts.split(","))
    return f"{scheme}://{userinfo}{at}/{path}?{listed}{'&' + query if query else ''}"


def libpq_url(url: str) -> str:
    """The URL as libpq (pg_dump, psql) reads it: SQLAlchemy's `?host=h1:p1&host=h2:p2`
    back into libpq's `h1:p1,h2:p2`, other query parameters kept, the driver name off."""
    from sqlalchemy.engine import make_url

    parsed = make_url(normalise_url(url))
    hosts = parsed.query.get("host")
    plain = parsed.set(drivername="postgresql")
    if not isinstance(hosts, tuple):
        return plain.render_as_string(hide_password=False)
    query = {k: v for k, v in parsed.query.items() if k != "host"}
    rendered = plain.set(query=query).render_as_string(hide_password=False)
    scheme, rest = rendered.split("://", 1)
    userinfo, at, tail = rest.partition("@") if "@" in rest.split("/", 1)[0] else ("", "", rest)
    return f"{scheme}://{userinfo}{at}{','.join(hosts)}{tail}"


def _enable_sqlite_wal(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _create_private_file(path: Path) -> None:
    """The SQLite file holds password and key hashes: created readable by its owner only
    (SQLite gives its -wal and -shm files the same mode). An existing file is not opened
    here: closing another descriptor of an open database drops this process's SQLite
    locks on it."""
    if str(path) in ("", ":memory:") or path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:  # another process created it first
        return


@lru_cache
def engine_for(url: str) -> Engine:
    url = normalise_url(url)
    if url.startswith("sqlite"):
        _create_private_file(Path(url.removeprefix("sqlite:///")))
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _enable_sqlite_wal)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=20,
        connect_args=_postgres_timeouts(),
        pool_timeout=_POOL_WAIT_S,
    )


# A request waits this long for a pooled connection, then answers UNAVAILABLE (503):
# every connection held by calls on a hung database must not queue the rest for 30 s.
_POOL_WAIT_S = 5.0


def _postgres_timeouts() -> dict[str, Any]:
    """Connecting gives up after `db_connect_timeout_s`; a statement after
    `db_statement_timeout_s` (server side: a lock wait or a runaway query); a host that
    stops acknowledging data after the same connect timeout (TCP_USER_TIMEOUT). A
    PostgreSQL process that is alive but stuck, on a connection already open, is not
    bounded by any of these."""
    settings = get_settings()
    statement_ms = int(settings.db_statement_timeout_s * 1000)
    return {
        "connect_timeout": settings.db_connect_timeout_s,
        # Data unacknowledged this long (a partitioned or dead host): the connection fails.
        "tcp_user_timeout": settings.db_connect_timeout_s * 1000,
        "options": f"-c statement_timeout={statement_ms}",
    }


def get_engine() -> Engine:
    return engine_for(get_settings().sqlalchemy_url)


def new_session() -> Session:
    return Session(get_engine(), expire_on_commit=False)


def _alembic() -> tuple[Any, Engine]:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parents[1] / "migrations"))
    # A migration may rewrite a big table: no statement timeout for it.
    url = normalise_url(get_settings().sqlalchemy_url)
    engine = get_engine() if url.startswith("sqlite") else create_engine(url, poolclass=NullPool)
    config.attributes["engine"] = engine
    return config, engine


def migrate(revision: str = "head") -> None:
    """Bring the database to `revision` (the newest by default), forward only. A schema a
    newer release migrated is left as it is (a rolled-back release serves it: migrations
    only add); Alembic would otherwise fail with "Can't locate revision"."""
    from alembic import command

    current, head, known = schema_revisions()
    if not known:
        if revision != "head":
            raise SystemExit(_newer_schema_refusal(current, revision))
        logging.getLogger(__name__).warning(
            "the database schema (%s) is newer than this release's (%s): left as it is",
            current,
            head,
        )
        return
    config, _ = _alembic()
    command.upgrade(config, revision)


def downgrade(revision: str) -> None:
    """Take the schema back to `revision` (docs/DEPLOYMENT.md: what each step drops)."""
    from alembic import command

    current, _, known = schema_revisions()
    if not known:  # only the release that wrote a revision knows how to undo it
        raise SystemExit(_newer_schema_refusal(current, revision))
    config, _ = _alembic()
    command.downgrade(config, revision)


def _newer_schema_refusal(current: str | None, revision: str) -> str:
    return (
        f"refusing: the database schema is at {current}, newer than this release knows; "
        f"run the newer release's `geosvc migrate --down-to {revision}` first"
    )


def schema_revisions() -> tuple[str | None, str, bool]:
    """(the database's Alembic revision, the newest this code knows, whether this code
    knows the database's revision: False when a newer release migrated it)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    config, engine = _alembic()
    script = ScriptDirectory.from_config(config)
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    known = current is None or current in {rev.revision for rev in script.walk_revisions()}
    return current, str(script.get_current_head()), known


def require_current_schema() -> None:
    """Refuse to serve a database this release's `geosvc migrate` has not run on. A newer
    schema is served, with a warning: a rollback of the code alone (migrations only add,
    so the older release still works; docs/DEPLOYMENT.md, "Upgrades and rollbacks")."""
    current, head, known = schema_revisions()
    if not known:
        logging.getLogger(__name__).warning(
            "the database schema (%s) is newer than this release's (%s): serving it as a "
            "rolled-back release",
            current,
            head,
        )
    elif current != head:
        raise SystemExit(
            f"refusing to start: the database schema is at {current or 'nothing'} and this "
            f"release needs {head}; run `geosvc migrate` (once, before the new code serves)"
        )
