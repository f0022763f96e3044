"""The kombu Redis transport, with one Redis client object per channel.

kombu builds a new `redis.Redis` around the channel's connection pool for every ack,
every event publish and every pipeline (`Channel._create_client`). Building one costs
about 0.15-0.3 ms of CPU (redis-py fills a response-callback table each time), several
times per task: a noticeable share of a worker's time per tool call, and in a threads
pool all of it under the GIL. A `redis.Redis` over a connection pool is thread-safe
(each command borrows a connection), so one per channel and pool serves them all; a new
pool (after a fork or a reconnect) gets a new client.

A channel closed after its connection (the worker's reconnect after a Redis restart:
`Connection.collect()` detaches the transport, then `close()` closes the channel, which
drops its pool and then restores its unacknowledged messages) has no connection details
left to build a pool from: kombu's own `_connparams` raises AttributeError on
`None.hostname`, which Celery treats as unrecoverable and the worker exits. Here the
channel's last pool serves that restore instead (a pool reconnects by itself), and with no
pool at all the channel answers with a connection error, which kombu and Celery expect
from a broker that is gone.

Reconnecting: Celery's consumer sleeps 2 s after its first failed attempt to reach the
broker again (then 4, 6, ... up to 30 s). A Redis restart takes a fraction of a second, and
the first attempt comes within milliseconds of the crash, so it nearly always failed and
every restart cost 2 s of no tool calls. One attempt here keeps trying for up to
`RECONNECT_WAIT_S` (Redis refusing connections, or loading its AOF) before it fails.
"""

from __future__ import annotations

import time
from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = f"{__name__}:Transport"
RECONNECT_WAIT_S = 2.0
RECONNECT_POLL_S = 0.05


class Channel(kombu_redis.Channel):
    _sync_client: tuple[Any, Any] | None = None  # (pool, client built on it)

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:  # the consumer's BRPOP/pub-sub connections: kombu's own way
            return super()._create_client(asynchronous=True)
        cached = self._sync_client
        if self._pool is None and not self._can_build_pool():
            if cached is None:
                raise RedisConnectionError("the broker connection is closed")
            return cached[1]
        pool = self.pool
        if cached is None or cached[0] is not pool:
            cached = (pool, super()._create_client())
            self._sync_client = cached
        return cached[1]

    def _can_build_pool(self) -> bool:
        """Whether kombu still has the connection details a new pool is built from."""
        transport = self.connection
        return transport is not None and transport.client is not None


class Transport(kombu_redis.Transport):
    Channel = Channel

    def establish_connection(self) -> Any:
        deadline = time.monotonic() + RECONNECT_WAIT_S
        while True:
            try:
                return super().establish_connection()
            except RedisConnectionError:  # refused, reset, or BusyLoadingError
                if time.monotonic() >= deadline:
                    raise
                time.sleep(RECONNECT_POLL_S)
