"""A job survives its api process: SIGKILL the api mid-job (one job over /v1/jobs, one as
an MCP task), start a new api on the same address, and both complete with every row,
each charged once (ledger = counter = rows with data), their results downloadable from
the new api. The job's state is in the database and its rows run on the worker, so the
api holds nothing a job needs; this is what shows it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from sqlalchemy import create_engine
from sqlmodel import Session

from app.models import Job
from tests.fakes.upstream import FakeUpstream
from tests.jobs.conftest import jobs_env, ledger_count, ledger_settles, wait_for
from tests.mcp.conftest import Stack, running_stack
from tests.mcp.test_tasks import Rpc, postal_codes
from tests.support.fixtures import Backend
from tests.support.live_server import launch_live_server, wait_until_healthy
from tests.v1.conftest import Client, new_client

ROWS = 400
PLACES = ["Paris", "Austin, TX", "Berlin", "Tokyo", "Nairobi", "Lima", "Oslo"]
DONE = re.compile(r"^([\d,]+) of ([\d,]+) rows")


@pytest.fixture
def own_stack(
    backend: Backend, fake_upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A stack of this test's own: its api is killed (and replaced: the new one is
    stopped at the end)."""
    if backend.name != "postgres":
        pytest.skip("PostgreSQL, as production runs api processes over one database")
    env = jobs_env(
        backend,
        fake_upstream,
        "jobs-api-kill",
        GEOSVC_FREE_QUOTA="100000",
        GEOSVC_FREE_JOB_ROWS_PER_S="100",  # two jobs of 400 rows: seconds, seen mid-way
    )
    with running_stack(env, tmp_path_factory.mktemp("jobs-api-kill")) as stack:
        yield stack


def rows_done(task: dict[str, Any]) -> int:
    matched = DONE.match(task["statusMessage"])
    assert matched, task
    return int(matched.group(1).replace(",", ""))


def test_sigkill_of_the_api_mid_job_loses_nothing(
    own_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    clients: list[httpx.Client] = []
    client: Client = new_client(own_stack.server.url, clients)
    rpc = Rpc(own_stack, client.api_key)
    items = [{"query": PLACES[i % len(PLACES)], "limit": 1} for i in range(ROWS)]
    job_id = client.api.post("/v1/jobs", json={"tool": "geocode", "items": items}).json()["id"]
    task_id = rpc.start("get_population", {"postal_codes": postal_codes(ROWS)})["taskId"]
    wait_for(
        lambda: {"job": client.api.get(f"/v1/jobs/{job_id}").json()},
        lambda seen: seen["job"]["rowsDone"] >= 50,
        30,
    )
    wait_for(lambda: rpc.result("tasks/get", {"taskId": task_id}), lambda t: rows_done(t) >= 50, 30)

    own_stack.server.process.kill()  # SIGKILL: no shutdown of any kind
    own_stack.server.process.wait()
    job_at_kill = _read_job(own_stack, job_id)  # the database, not the dead api
    port = urlsplit(own_stack.server.url).port
    logs = tmp_path_factory.mktemp("jobs-api-kill") / "api2.log"
    own_stack.server = launch_live_server(own_stack.server.env, logs, port=port)
    try:
        wait_until_healthy(own_stack.server, deadline_s=60)
        api = _fresh(client.api, clients)  # the old connections died with the old api
        job = wait_for(
            lambda: dict(api.get(f"/v1/jobs/{job_id}").json()),
            lambda job: job["status"] != "working",
            90,
        )
        task = wait_for(
            lambda: rpc.result("tasks/get", {"taskId": task_id}),
            lambda task: task["status"] != "working",
            90,
        )
        task_result = rpc.result("tasks/result", {"taskId": task_id})
        results = api.get(f"/v1/jobs/{job_id}/results").text.splitlines()
        control = _fresh(client.control, clients)
        used = control.get("/usage").json()["used"]
    finally:
        for http in clients:
            http.close()

    assert job_at_kill["status"] == "working"
    assert job_at_kill["rows_done"] < ROWS
    assert job["status"] == "completed", job
    assert (job["rowsDone"], job["rowsWithData"], job["credits"]) == (ROWS, ROWS, ROWS)
    assert len(results) == ROWS
    assert all('"status":200' in row for row in results)
    assert task["status"] == "completed", task
    task_rows = task_result["structuredContent"]["results"]
    assert len(task_rows) == ROWS
    assert all("result" in row for row in task_rows)
    assert task_result["_meta"]["geosvc/usage"]["charged"] == ROWS
    database_url = own_stack.database_url
    assert ledger_settles(database_url, client.user_id, 2 * ROWS) == 2 * ROWS
    assert ledger_count(database_url, client.user_id) == 2 * ROWS  # none twice
    assert used == 2 * ROWS


def _read_job(stack: Stack, job_id: str) -> dict[str, Any]:
    """The job's row as the database holds it (no api is up to ask)."""
    engine = create_engine(stack.database_url)
    try:
        with Session(engine) as session:
            job = session.get(Job, job_id)
            assert job is not None
            return {"status": job.status, "rows_done": job.rows_done}
    finally:
        engine.dispose()


def _fresh(old: httpx.Client, clients: list[httpx.Client]) -> httpx.Client:
    """A client like `old` (its address, key or session cookie) on new connections."""
    new = httpx.Client(base_url=old.base_url, headers=old.headers, cookies=old.cookies, timeout=30)
    clients.append(new)
    return new
