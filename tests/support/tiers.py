"""The two tiers and the database matrix, decided at collection.

`slow`: a test that starts a process (our server, a worker, beat, nginx, redis-server, the
CLI), opens a browser or needs the machine's services: the database matrix (`backend`)
or the real Redis. Found from what the test reaches, not from a list: the fixtures it
uses (their whole closure), its own body, and every function or class of tests/ and
bench/ that those name, followed down. A new test that asks for `live_server`, `stack`
or a fixture of its own that calls `start_stack` is slow without saying so.
`make test-fast` runs the rest (`-m "not slow"`) with fakeredis for Redis
(GEOSVC_TEST_FAKE_REDIS=1): no service, no process of ours.

The database matrix: `backend` runs on SQLite and PostgreSQL where the database matters.
Below, the folders and files where it does not, with why: they run on SQLite only.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
_WALKED = (ROOT / "tests", ROOT / "bench")

# Calls that make a test slow, wherever in its reach they appear: a process started
# (`subprocess.Popen`, `subprocess.run`, ...; waiting for one is not) or a browser.
_STARTS = {"Popen", "run", "call", "check_call", "check_output"}
_SLOW_NAMES = {
    "create_subprocess_exec": "starts a process",
    "sync_playwright": "opens a browser",
    "fresh_postgres_database": "needs PostgreSQL",
}
# Fixtures that are services themselves (their closure is walked like any other).
_SLOW_FIXTURES = {
    "backend": "the database matrix (PostgreSQL, and Redis)",
}
# Fakes of the outside world that the fast tier may start: fakeredis's TCP server.
_FAKES = {"redis_url_for_tests"}

SQLITE_ONLY: dict[str, str] = {
    # What these assert is the protocol, the edge or the process, over a stack whose
    # database work is the same accounts, keys and ledger rows that tests/accounts,
    # tests/api_keys, tests/metering and tests/billing check on both databases.
    "tests/mcp/": "MCP tools, tenancy and request log over a stack: the ledger rows they "
    "count are written by the metering code tested on both databases",
    "tests/v1/": "the HTTP data API: the same tool-call service as /mcp",
    "tests/upstream/": "outside providers and their cache (Redis), not the database",
    "tests/observability/": "metrics, logs, traces and request bounds of the processes",
    "tests/dashboard/": "HTML pages and their forms over the control-plane endpoints",
    "tests/test_hardening.py": "the HTTP edge's limits and headers",
    "tests/test_production.py": "start-up refusals and production defaults",
    "tests/test_forwarded.py": "the proxy headers uvicorn trusts",
    "tests/oauth/test_security.py": "the OAuth edge's checks; tests/oauth/test_storage.py "
    "and the host flow keep both databases",
    "tests/oauth/test_metadata_documents.py": "metadata documents, built from settings",
    "tests/mail/": "the mail transport and its start-up check",
    "tests/queue/": "Celery and kombu over Redis",
    "tests/drills/": "fault drills on their own PostgreSQL (drill_stack)",
    "tests/request_log/": "the request log lives in Redis",
    "tests/test_zygote.py": "how test servers are started",
    "tests/tiles/": "map tiles drawn from the basemap, their budgets (Redis) and signed "
    "links (HMAC): an account and a key are all they ask of the database",
    "tests/oauth/test_document_fetch_limits.py": "a fetch's deadline, slots and the "
    "per-address limits, held in the api process and Redis",
    **dict.fromkeys(
        (
            f"tests/jobs/test_endpoints.py::TestRefusals::{test}"
            for test in ("test_malformed", "test_too_many_rows", "test_body_over_the_limit")
        ),
        "bodies refused at the edge before a job is stored",
    ),
}
# Inside those, what is about the database after all.
BOTH_DATABASES = {
    "tests/test_hardening.py::TestDatabaseUnresponsive": "a table lock, on PostgreSQL only",
    # MCP tasks are jobs: their state and rows in the database (what the other tests of
    # tests/mcp/test_tasks.py check is the protocol: capabilities, limits, headers)
    **dict.fromkeys(
        (
            f"tests/mcp/test_tasks.py::{test}"
            for test in (
                "TestLegacyTasks::test_a_list_of_150_runs_as_a_task",
                "TestLegacyTasks::test_list_and_cancel",
                "TestLegacyTasks::test_another_replica_finds_the_task",
                "TestLegacyTasks::test_another_accounts_task_is_not_found",
                "TestModernTasks::test_a_long_list_is_answered_with_a_task",
                "TestTaskNotifications",
            )
        ),
        "MCP tasks are jobs: their state and rows in the database",
    ),
    "tests/oauth/test_document_fetch_limits.py::test_fetches_in_flight_hold_no_thread_or_"
    "database_connection": "the database's connection pool",
}


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _ours(target: object) -> bool:
    try:
        path = Path(inspect.getfile(target))  # type: ignore[arg-type]
    except (TypeError, OSError):
        return False
    return any(path.is_relative_to(folder) for folder in _WALKED)


_reasons: dict[Any, str | None] = {}


def _slow_reason(target: Any) -> str | None:
    """Why calling `target` (a function or class of tests/ or bench/) is slow, if it is."""
    if target in _reasons:
        return _reasons[target]
    _reasons[target] = None  # in progress: a cycle adds nothing
    _reasons[target] = _find_reason(target)
    return _reasons[target]


def _find_reason(target: Any) -> str | None:
    if isinstance(target, type):
        members = [m for m in vars(target).values() if inspect.isfunction(m)]
        return next(filter(None, map(_slow_reason, members)), None)
    function = inspect.unwrap(target)
    code = getattr(function, "__code__", None)
    if code is None or function.__name__ in _FAKES:
        return None
    scope = getattr(function, "__globals__", {})
    names = _code_names(code)
    if "subprocess" in names and names & _STARTS:
        return f"{function.__qualname__} starts a process"
    for name in sorted(names):
        if name in _SLOW_NAMES:
            return f"{function.__qualname__} {_SLOW_NAMES[name]}"
        found = scope.get(name)
        if (inspect.isfunction(found) or isinstance(found, type)) and _ours(found):
            if reason := _slow_reason(found):
                return reason
    return None


def slow_reason(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "cluster" in callspec.params.values():
        return "runs on a Redis Cluster (three redis-servers of its own)"
    info = getattr(item, "_fixtureinfo", None)
    names = list(info.names_closure) if info is not None else []
    for name in names:
        if name in _SLOW_FIXTURES:
            return f"uses {name}: {_SLOW_FIXTURES[name]}"
    if isinstance(item, pytest.Function):
        if reason := _slow_reason(item.function):
            return reason
    for name in names:
        for fixture in (info.name2fixturedefs.get(name) or ()) if info else ():
            if _ours(fixture.func) and (reason := _slow_reason(fixture.func)):
                return f"uses {name}: {reason}"
    return None


def on_sqlite_only(item: pytest.Item) -> bool:
    """A PostgreSQL run of a test where the database does not matter."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or callspec.params.get("backend") != "postgres":
        return False
    if any(item.nodeid.startswith(prefix) for prefix in BOTH_DATABASES):
        return False
    return any(item.nodeid.startswith(prefix) for prefix in SQLITE_ONLY)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselected = [item for item in items if on_sqlite_only(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not on_sqlite_only(item)]
    for item in items:
        if reason := slow_reason(item):
            item.add_marker(pytest.mark.slow(reason=reason))
