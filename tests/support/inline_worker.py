"""A tool worker inside the test process, for fast tests of the metered call.

It does what a `geosvc worker` does with one tool task, minus the process: takes the
next message off a tool queue (the kombu Redis transport's list, on the test's Redis),
runs the task function of `workers.tools` on its arguments, and stores the result with
Celery's own result backend, which publishes it to the api's `ResultWaiter`. Everything
of ours on the way runs as in production: the send, the wait, the task, the store.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from celery import states

from app.kit.config import get_settings
from app.queue import celery_app
from workers import tools


@dataclass(frozen=True)
class ToolTask:
    task_id: str
    name: str
    args: list[Any]


class InlineToolWorker:
    def __init__(self, queue: str) -> None:
        settings = get_settings()
        broker = settings.broker_url or settings.redis_url  # a Redis Cluster's is apart
        assert broker, "point Settings at a Redis first"
        self.queue_key = settings.redis_key_prefix + queue
        self._client = aioredis.Redis.from_url(broker)

    async def take(self, wait_s: float = 5.0) -> ToolTask:
        """The next task sent to the queue (a blocking pop: no polling)."""
        popped = await self._client.brpop([self.queue_key], timeout=wait_s)  # type: ignore[misc]
        assert popped is not None, f"no task reached {self.queue_key} within {wait_s} s"
        message = json.loads(popped[1])
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        headers = message["headers"]
        return ToolTask(headers["id"], headers["task"], args)

    async def run(self, task: ToolTask) -> dict[str, Any]:
        """Run `task` as the worker would (in a thread: the tool blocks), store its result."""
        function = {tools.run_tool.name: tools.run_tool, tools.run_batch.name: tools.run_batch}
        result: dict[str, Any] = await asyncio.to_thread(function[task.name], *task.args)
        backend = celery_app.backend  # this thread's (Celery keeps one per thread)
        await asyncio.to_thread(backend.store_result, task.task_id, result, states.SUCCESS)
        return result

    async def serve_one(self) -> dict[str, Any]:
        return await self.run(await self.take())

    async def queued(self) -> int:
        return int(await self._client.llen(self.queue_key))  # type: ignore[misc]

    async def close(self) -> None:
        await self._client.delete(self.queue_key)
        await self._client.aclose()
