"""Send a task to a Celery worker and await its result without holding a thread.

The Redis result backend stores a result under `<prefix>celery-task-meta-<id>` and
publishes it on the channel of the same name. Each api process keeps one pub/sub
connection (`ResultWaiter`, one per event loop) subscribed to the channels of its own
task ids. Should a publish be missed anyway (the pub/sub connection dropped and
reconnected), the stored key is read every `POLL_FALLBACK_S` until the deadline.

At the deadline the call is abandoned: the caller releases its credit, and the task was
sent with `expires` equal to the deadline, so a worker that picks it up later discards it
instead of running it. A result that still arrives late is never read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

import redis.asyncio as aioredis
from celery import states
from redis.asyncio.client import Pipeline as AsyncPipeline
from redis.exceptions import RedisError

from app.kit.config import get_settings
from app.kit.errors import DeadlineExceeded, Internal, ServiceUnavailable
from app.kit.redis_client import async_pubsub_redis, async_redis
from app.queue.celery import celery_app, publish_declares, results_awaited_elsewhere

logger = logging.getLogger(__name__)

POLL_FALLBACK_S = 1.0
_SOME_ID = "some-task-id"  # result keys are a fixed prefix and the task id


class ResultWaiter:
    """Futures keyed by result key, fed by one reader task on one pub/sub connection.

    Task ids start with this waiter's own token, and the connection holds one pattern
    subscription to the result channels of exactly those ids, made (and confirmed) before
    the first task is sent: no per-call subscribe, and no window in which a result could
    be published unheard.
    """

    def __init__(self, client: aioredis.Redis, listener: aioredis.Redis | None = None) -> None:
        """`client` for commands (with a read timeout); `listener` for the pub/sub
        connection, which must block without one (default: `client`)."""
        self._client = client
        self._token = secrets.token_hex(6)
        # Read once, not per call: Celery's configuration and backend are lookups through
        # thread-local proxies (about 0.05 ms of the api's CPU a call). The waiter's
        # subscription is bound to the same configuration anyway.
        self._declare = publish_declares(str(celery_app.conf.broker_url))
        self._result_key_prefix = result_key(_SOME_ID).removesuffix(_SOME_ID)
        self._pubsub = (listener or client).pubsub()
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._ready = asyncio.Lock()
        self._cleanup: set[asyncio.Task[Any]] = set()
        self._producer: Any = None  # kombu's Producer, from Celery's pool (`_send`)

    def new_task_id(self, prefix: str) -> str:
        return f"{prefix}_{self._token}_{secrets.token_hex(8)}"

    async def run_task(
        self,
        task_id: str,
        name: str,
        args: list[Any],
        *,
        deadline_s: float,
        queue: str | None = None,
        forget: bool = True,
    ) -> dict[str, Any]:
        """Send `name(*args)` as task `task_id` (from `new_task_id`) to `queue` (None: the
        task's route); its result, or DeadlineExceeded / Internal. The stored result is
        deleted once read or abandoned; `forget=False` leaves that to the caller, who adds
        `forget_result(task_id)` to a pipeline it sends anyway (one Redis write less)."""
        await self._start()
        key = self._result_key_prefix + task_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            self._send(task_id, name, args, deadline_s=deadline_s, queue=queue)
            meta = await self._await(key, future, time.monotonic() + deadline_s)
        finally:
            self._pending.pop(key, None)
            if forget:  # the stored copy is not needed once read (or once abandoned)
                self._forget(key)
        return _result_of(meta)

    def _send(
        self, task_id: str, name: str, args: list[Any], *, deadline_s: float, queue: str | None
    ) -> None:
        """Publish the task with this waiter's own producer: taken from Celery's pool once
        and kept (sends happen on this waiter's event loop, one at a time), instead of an
        acquire and a release per call (about 0.1 ms of the api's CPU). A send that fails
        hands the producer back, and the next send takes one from the pool again."""
        if self._producer is None:
            self._producer = celery_app.producer_pool.acquire(block=True)
        try:
            with results_awaited_elsewhere():
                celery_app.send_task(
                    name,
                    args=args,
                    task_id=task_id,
                    queue=queue,
                    expires=deadline_s,
                    argsrepr=repr(args)[:200],  # bounded, and skips Celery's slower saferepr
                    kwargsrepr="{}",
                    declare=self._declare,
                    producer=self._producer,
                )
        except BaseException:
            self._release_producer()
            raise

    def _release_producer(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.release()

    async def _start(self) -> None:
        if self._reader is not None and not self._reader.done():
            return
        async with self._ready:
            if self._reader is not None and not self._reader.done():
                return
            await self._pubsub.psubscribe(result_key(f"*_{self._token}_*"))
            # Bounded like any command: an unresponsive Redis is an outage, not a bug.
            wait_s = get_settings().redis_command_timeout_s
            confirmation = await self._pubsub.get_message(timeout=wait_s)
            if confirmation is None:
                await self._pubsub.aclose()  # subscribe afresh on the next call
                raise ServiceUnavailable()
            if confirmation.get("type") != "psubscribe":
                raise Internal("The result channel could not be subscribed")
            self._reader = asyncio.create_task(self._read(), name="celery-result-reader")

    async def _await(
        self, key: str, future: asyncio.Future[dict[str, Any]], deadline: float
    ) -> dict[str, Any]:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeadlineExceeded()
            try:
                return await asyncio.wait_for(
                    asyncio.shield(future), timeout=min(remaining, POLL_FALLBACK_S)
                )
            except TimeoutError:
                meta = _decode(await self._client.get(key))
                if meta is not None and meta.get("status") in states.READY_STATES:
                    return meta

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(timeout=None)
            except RedisError as exc:
                logger.warning("result pub/sub connection failed (%s); reconnecting", exc)
                await asyncio.sleep(0.1)
                continue
            if message is None or message.get("type") != "pmessage":
                continue
            future = self._pending.get(str(message["channel"]))
            meta = _decode(message["data"])
            if future is not None and meta is not None and not future.done():
                if meta.get("status") in states.READY_STATES:
                    future.set_result(meta)

    def _forget(self, key: str) -> None:
        async def delete() -> None:
            try:
                await self._client.delete(key)
            except RedisError:  # Redis is down: the key expires with result_expires anyway
                pass

        task = asyncio.create_task(delete())
        self._cleanup.add(task)
        task.add_done_callback(self._cleanup.discard)

    async def close(self) -> None:
        self._release_producer()
        if self._reader is not None:
            self._reader.cancel()
        await self._pubsub.aclose()


def forget_result(task_id: str) -> Callable[[AsyncPipeline], None]:
    """The DEL of a task's stored result, for a pipeline (see `run_task`'s `forget`)."""

    def add(pipe: AsyncPipeline) -> None:
        pipe.delete(result_key(task_id))

    return add


def result_key(task_id: str) -> str:
    key = celery_app.backend.get_key_for_task(task_id)
    return key.decode() if isinstance(key, bytes) else str(key)


def _decode(raw: object) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        meta = json.loads(raw if isinstance(raw, str | bytes) else str(raw))
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


# Exception types a task fails with when Redis or the broker went away under it (e.g. its
# result could not be stored): the call is worth retrying, it is not a bug.
_OUTAGE_EXC_TYPES = frozenset(
    {
        "BusyLoadingError",  # a restarted Redis still loading its AOF
        "ConnectionError",
        "ConnectionResetError",
        "OperationalError",
        "TimeoutError",
    }
)


def _result_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    result = meta.get("result")
    if meta.get("status") == states.SUCCESS and isinstance(result, dict):
        return dict(result)
    if isinstance(result, dict) and result.get("exc_type") in _OUTAGE_EXC_TYPES:
        logger.warning("task %s failed with %s", meta.get("task_id"), result.get("exc_type"))
        raise ServiceUnavailable()
    exc_type = result.get("exc_type") if isinstance(result, dict) else None
    logger.error("task %s ended %s (%s)", meta.get("task_id"), meta.get("status"), exc_type)
    raise Internal("The call failed unexpectedly; no credit was charged.")


_waiters: dict[asyncio.AbstractEventLoop, ResultWaiter] = {}


def waiter() -> ResultWaiter:
    """This event loop's waiter (an api process has one loop; tests may have several)."""
    loop = asyncio.get_running_loop()
    current = _waiters.get(loop)
    if current is None:
        current = _waiters[loop] = ResultWaiter(async_redis(), async_pubsub_redis())
    return current


async def close_waiter() -> None:
    current = _waiters.pop(asyncio.get_running_loop(), None)
    if current is not None:
        await current.close()
