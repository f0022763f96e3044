"""Where one tool call's time goes, stage by stage, in the api and in the client.

`bench/call_profile.py` says where the CPU goes; this says where a sequential call's
latency goes. It starts `geosvc api` (uvicorn, through this script, which first wraps a
few of the api's functions with timers) and a `geosvc worker` as bench/mcp_e2e.py does,
makes --calls sequential `geocode` calls through /mcp with the official client (also
timed: the HTTP exchange and its validation of the result against the output schema), and
prints the median of each stage. Stages nest: `handle_call_tool` holds `call_tool`, which
holds `reserve`... so a parent's median minus its children's is the parent's own time.

The timers wrap module attributes the api looks up at call time; they add a few
microseconds per stage. The bare-MCP baseline (a) of mcp_e2e.py is timed the same way.

    .venv/bin/python bench/call_timeline.py [--calls 1500]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_e2e import (  # noqa: E402  (bench/mcp_e2e.py)
    BARE_MCP_APP,
    account,
    bench_env,
    mcp_client_factory,
    processes,
    wait_for_worker,
    wait_until_up,
)
from metering import redis_for_bench  # noqa: E402

from app.kit.embedded_redis import free_port  # noqa: E402

WARMUP = 100
TIMES: dict[str, list[float]] = defaultdict(list)
# The stages, outermost first (a stage's time includes the stages indented under it).
CLIENT_CALL = "client: whole call"
CLIENT_HTTP = "  client: HTTP request to response headers"
CLIENT_VALIDATION = "  client: result validated against the output schema"
API_APP = "  api: the ASGI app (returns after its teardown)"
ADMIT = "    admit (edge): validate, entitlements, reserve"
RESERVE = "      reserve (one Redis script)"
HANDLER = "    handle_call_tool (the SDK's tool handler)"
CALL_TOOL = "      call_tool"
RUN_TASK = "        run_task: send and wait"
SEND_TASK = "          send_task (Celery's publish, blocking)"
RESULT_WAIT = "          result wait (the worker picks up, runs, stores)"
COMMIT = "        commit + outbox + request log written (reply read after the answer)"
BARE_APP = "  bare: the ASGI app (returns after its teardown)"
ORDER = [
    CLIENT_CALL, CLIENT_HTTP, CLIENT_VALIDATION, API_APP, BARE_APP, ADMIT, RESERVE,
    HANDLER, CALL_TOOL, RUN_TASK, SEND_TASK, RESULT_WAIT, COMMIT,
]  # fmt: skip


def timer(
    times: dict[str, list[float]], label: str, original: Callable[..., Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """`original` (a coroutine function or method), recording each call's duration."""

    @functools.wraps(original)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await original(*args, **kwargs)
        finally:
            times[label].append(time.perf_counter() - started)

    return wrapper


def timed(owner: Any, name: str, label: str) -> None:
    setattr(owner, name, timer(TIMES, label, getattr(owner, name)))


def timed_sync(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            TIMES[label].append(time.perf_counter() - started)

    setattr(owner, name, wrapper)


def timed_app(app: Callable[..., Awaitable[None]], label: str) -> Callable[..., Awaitable[None]]:
    async def wrapper(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await app(scope, receive, send)
        finally:
            TIMES[label].append(time.perf_counter() - started)

    return wrapper


def write_times_on_sigterm(path: Path) -> None:
    def write(*_: Any) -> None:
        path.write_text(json.dumps(TIMES))
        os._exit(0)

    signal.signal(signal.SIGTERM, write)


def serve_api(argv: list[str]) -> None:
    """The api under uvicorn, its stages timed (this process is `geosvc api` for the bench)."""
    import uvicorn

    import app.main
    import app.mcp.admission
    import app.mcp.server
    import app.metering.service
    import app.queue.replies
    from app.queue.celery import celery_app

    for owner, name, label in (
        (app.mcp.admission, "admit", ADMIT),
        (app.metering.service, "reserve", RESERVE),
        (app.mcp.server, "handle_call_tool", HANDLER),
        (app.mcp.server, "call_tool", CALL_TOOL),
        (app.queue.replies.ResultWaiter, "run_task", RUN_TASK),
        (app.queue.replies.ResultWaiter, "_await", RESULT_WAIT),
        (app.metering.service, "send_commit", COMMIT),
    ):
        timed(owner, name, label)
    timed_sync(celery_app, "send_task", SEND_TASK)
    create_app = app.main.create_app
    app.main.create_app = lambda: timed_app(create_app(), API_APP)
    write_times_on_sigterm(Path(os.environ["TIMELINE_OUT"]))
    sys.argv = ["uvicorn", *argv]
    uvicorn.main()


def serve_bare(argv: list[str]) -> None:
    """The bare MCP server of mcp_e2e.py, its ASGI app timed."""
    import uvicorn

    namespace: dict[str, Any] = {}
    exec(BARE_MCP_APP, namespace)  # noqa: S102  (the bench's own source)
    write_times_on_sigterm(Path(os.environ["TIMELINE_OUT"]))
    config = uvicorn.Config(timed_app(namespace["app"], BARE_APP), log_level="warning")
    config.host, config.port = "127.0.0.1", int(argv[0])
    uvicorn.Server(config).run()


async def client_calls(
    url: str, headers: dict[str, str], tool: str, args: dict[str, Any], calls: int
) -> dict[str, list[float]]:
    """Sequential calls, with the client's HTTP exchange and its result validation timed."""
    import httpx2
    from mcp.client.session import ClientSession

    client_times: dict[str, list[float]] = defaultdict(list)
    send, validate = httpx2.AsyncClient.send, ClientSession.validate_tool_result

    httpx2.AsyncClient.send = timer(client_times, CLIENT_HTTP, send)  # type: ignore[method-assign]
    ClientSession.validate_tool_result = timer(  # type: ignore[method-assign]
        client_times, CLIENT_VALIDATION, validate
    )
    try:
        async for call in mcp_client_factory(url, headers, tool, args)():
            for i in range(WARMUP + calls):
                started = time.perf_counter()
                await call()
                if i >= WARMUP:
                    client_times[CLIENT_CALL].append(time.perf_counter() - started)
    finally:
        httpx2.AsyncClient.send = send  # type: ignore[method-assign]
        ClientSession.validate_tool_result = validate  # type: ignore[method-assign]
    return client_times


def print_medians(title: str, times: dict[str, list[float]]) -> None:
    print(title)
    for label in ORDER:
        samples = times.get(label, [])
        kept = samples[WARMUP:] if len(samples) > WARMUP else samples
        if kept:
            print(f"  {label:<58} {statistics.median(kept) * 1000:7.3f} ms")


def stopped_times(process: subprocess.Popen[bytes], out: Path) -> dict[str, list[float]]:
    process.terminate()
    process.wait(timeout=30)
    return dict(json.loads(out.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1500)
    args = parser.parse_args()
    python, script = sys.executable, str(Path(__file__).resolve())
    with redis_for_bench() as redis_url, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        api_port, bare_port = free_port(), free_port()
        env = bench_env(redis_url, work, GEOSVC_BASE_URL=f"http://127.0.0.1:{api_port}")
        subprocess.run([python, "-m", "app.cli", "migrate"], env=env, check=True)
        subprocess.run([python, "-m", "app.cli", "data", "build"], env=env, check=True)
        uvicorn_args = ["--log-level", "warning", "--host", "127.0.0.1", "--port", str(api_port)]
        api_cmd = [python, script, "--serve-api", "--factory", "app.main:create_app", *uvicorn_args]
        bare_cmd = [python, script, "--serve-bare", str(bare_port)]
        worker_cmd = [python, "-m", "app.cli", "worker", "--loglevel", "warning"]
        with processes(
            (api_cmd, {**env, "TIMELINE_OUT": str(work / "api.json")}, work / "api.log"),
            (bare_cmd, {**env, "TIMELINE_OUT": str(work / "bare.json")}, work / "bare.log"),
            (worker_cmd, env, work / "worker.log"),
        ) as (api, bare, _worker):
            wait_until_up(f"http://127.0.0.1:{api_port}/")
            wait_until_up(f"http://127.0.0.1:{bare_port}/")
            wait_for_worker(env)
            api_key = account(env["GEOSVC_BASE_URL"])
            ours = asyncio.run(
                client_calls(
                    f"http://127.0.0.1:{api_port}/mcp",
                    {"Authorization": f"Bearer {api_key}"},
                    "geocode",
                    {"query": "Austin, TX", "limit": 1},
                    args.calls,
                )
            )
            bare_client = asyncio.run(
                client_calls(
                    f"http://127.0.0.1:{bare_port}/mcp", {}, "echo", {"text": "hello"}, args.calls
                )
            )
            api_times = stopped_times(api, work / "api.json")
            bare_times = stopped_times(bare, work / "bare.json")
    print(f"call timeline: {args.calls} sequential calls each, medians")
    print_medians("(c) our geocode via /mcp", {**ours, **api_times})
    print_medians("(a) bare MCPServer, trivial tool", {**bare_client, **bare_times})


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-api":
        serve_api(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--serve-bare":
        serve_bare(sys.argv[2:])
    else:
        main()
