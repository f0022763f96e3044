"""A job survives its worker: SIGKILL the worker (and its pool) mid-job, start another,
and the job completes with every row answered once and charged once (ledger = counter =
rows with data). The chunks the dead worker held come back through beat's
`jobs.resume_stalled`, sent here as beat sends it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.jobs.conftest import jobs_env, ledger_count, ledger_settles, wait_for
from tests.mcp.conftest import Stack, running_stack
from tests.support.celery_worker import launch_celery_worker, wait_until_ready
from tests.support.fixtures import Backend
from tests.v1.conftest import Client, new_client

ROWS = 300
PLACES = ["Paris", "Austin, TX", "Berlin", "Tokyo", "Nairobi", "Lima", "Oslo"]


@pytest.fixture
def own_stack(
    backend: Backend, fake_upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A stack of this test's own: its worker is killed."""
    env = jobs_env(
        backend,
        fake_upstream,
        "jobs-kill",
        GEOSVC_FREE_QUOTA="100000",
        GEOSVC_JOB_STALL_S="1",
        # 300 rows in about 5 s: time to kill the worker after 50, and little to wait
        GEOSVC_FREE_JOB_ROWS_PER_S="60",
    )
    with running_stack(env, tmp_path_factory.mktemp("jobs-kill")) as stack:
        yield stack


def test_sigkill_mid_job_loses_no_row_and_charges_none_twice(
    own_stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    clients: list[httpx.Client] = []
    client: Client = new_client(own_stack.server.url, clients)
    items = [{"query": PLACES[i % len(PLACES)], "limit": 1} for i in range(ROWS)]
    job_id = client.api.post("/v1/jobs", json={"tool": "geocode", "items": items}).json()["id"]
    # Kill once some chunks are done.
    before = wait_for(
        lambda: dict(client.api.get(f"/v1/jobs/{job_id}").json()),
        lambda job: job["rowsDone"] >= 50,
        30,
    )
    own_stack.worker.kill()
    at_kill = client.api.get(f"/v1/jobs/{job_id}").json()
    assert before["rowsDone"] >= 50
    assert at_kill["status"] == "working"
    assert at_kill["rowsDone"] < ROWS

    worker = launch_celery_worker(
        own_stack.server.env, tmp_path_factory.mktemp("jobs-kill") / "worker2.log"
    )
    try:
        wait_until_ready(worker)
        deadline = time.monotonic() + 90
        job = at_kill
        while job["status"] == "working" and time.monotonic() < deadline:
            worker.client.send_task("jobs.resume_stalled")  # what beat sends every 30 s
            job = wait_for(
                lambda: dict(client.api.get(f"/v1/jobs/{job_id}").json()),
                lambda job: job["status"] != "working",
                3,
            )
        assert job["status"] == "completed", job
        assert (job["rowsDone"], job["rowsWithData"], job["credits"]) == (ROWS, ROWS, ROWS)
        rows = client.api.get(f"/v1/jobs/{job_id}/results").text.splitlines()
        assert len(rows) == ROWS
        assert all('"status":200' in row for row in rows)
        assert ledger_settles(own_stack.database_url, client.user_id, ROWS) == ROWS
        assert client.usage()["used"] == ROWS
        assert ledger_count(own_stack.database_url, client.user_id) == ROWS
    finally:
        worker.stop(wait=False)
        for http in clients:
            http.close()
