"""The kombu Redis transport, with one Redis client object per channel.

kombu builds a new `redis.Redis` around the channel's connection pool for every ack,
every event publish and every pipeline (`Channel._create_client`). Building one costs
about 0.15-0.3 ms of CPU (redis-py fills a response-callback table each time), several
times per task: a noticeable share of a worker's time per tool call, and in a threads
pool all of it under the GIL. A `redis.Redis` over a connection pool is thread-safe
(each command borrows a connection), so one per channel and pool serves them all; a new
pool (after a fork or a reconnect) gets a new client.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis

TRANSPORT = f"{__name__}:Transport"


class Channel(kombu_redis.Channel):
    _sync_client: tuple[Any, Any] | None = None  # (pool, client built on it)

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:  # the consumer's BRPOP/pub-sub connections: kombu's own way
            return super()._create_client(asynchronous=True)
        pool = self.pool
        cached = self._sync_client
        if cached is None or cached[0] is not pool:
            cached = (pool, super()._create_client())
            self._sync_client = cached
        return cached[1]


class Transport(kombu_redis.Transport):
    Channel = Channel
