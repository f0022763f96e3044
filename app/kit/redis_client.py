"""Redis clients from Settings, and `LuaScript` (a script run by its SHA).

With no `GEOSVC_REDIS_URL` the process uses an in-process fakeredis server: enough for
one-process tools and tests. `geosvc dev` instead starts a local Redis (or a fakeredis TCP
server) and sets the URL, so the API, Celery and beat share one real protocol path.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Awaitable, Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import redis
import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline as AsyncPipeline
from redis.asyncio.cluster import ClusterPipeline as AsyncClusterPipeline
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.backoff import ExponentialBackoff
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.connection import parse_url
from redis.exceptions import NoScriptError
from redis.retry import Retry
from redis.sentinel import Sentinel

from app.kit.config import get_settings

if TYPE_CHECKING:
    import fakeredis


# redis-py's default retries a failed command 3 times with a backoff of 1 s to 10 s: with
# Redis down, seconds of stall per request before the 503. Ours ride through a dropped
# connection or a quick restart (0.1 + 0.2 + 0.2 s), then fail. A timeout is not retried:
# an unresponsive Redis (paused, swapping, a stuck fsync) would cost each command four
# timeouts (measured: a sign-in 20.6 s before its 503). So one command waits at most
# `redis_command_timeout_s` (1.5 s) and connecting at most CONNECT_TIMEOUT_S; that bounds
# every request path. Only the result listener's pub/sub connection has no read timeout:
# it blocks on pub/sub by design (`async_pubsub_redis`).
_RETRIES = 3
_BACKOFF = ExponentialBackoff(cap=0.2, base=0.05)
CONNECT_TIMEOUT_S = 2.0


def _retry() -> Retry:
    return Retry(_BACKOFF, _RETRIES, supported_errors=(redis.ConnectionError,))


def _async_retry() -> AsyncRetry:
    return AsyncRetry(_BACKOFF, _RETRIES, supported_errors=(redis.ConnectionError,))


@lru_cache
def _fake_server() -> fakeredis.FakeServer:
    import fakeredis  # only without a Redis URL (0.25 s of imports a server does not need)

    return fakeredis.FakeServer()


def _options(*, decode: bool, command_timeout: bool) -> dict[str, Any]:
    """What every client to GEOSVC_REDIS_URL shares: bounded connecting and, unless it
    waits on pub/sub, bounded commands (see above)."""
    options: dict[str, Any] = {
        "decode_responses": decode,
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
    }
    if command_timeout:
        options["socket_timeout"] = get_settings().redis_command_timeout_s
    return options


# On a Redis Cluster (`GEOSVC_REDIS_CLUSTER`) the clients are redis-py's `RedisCluster`s
# seeded from the one node GEOSVC_REDIS_URL names; they follow MOVED and ASK themselves.
# Callers keep the `redis.Redis` type: a cluster client answers the same commands, and
# every key the app writes in one script or transaction shares its hash tag (one slot).


# Under Sentinel (`GEOSVC_REDIS_SENTINELS`) the clients' connection pools ask the
# Sentinels for the current primary on every new connection: once a replica is promoted,
# the next connection (after the dead one's error) goes to it. A connection to a primary
# demoted to replica is dropped on its first READONLY reply (redis-py's Sentinel pool).


def _sentinel_options(url: str) -> dict[str, Any]:
    """What the URL gives a connection under Sentinel: database and credentials."""
    parsed = parse_url(url)
    return {k: parsed[k] for k in ("db", "username", "password") if parsed.get(k) is not None}


def _sentinel_kwargs() -> dict[str, Any]:
    """For the connections to the Sentinels themselves: bounded like every other."""
    return {"socket_connect_timeout": CONNECT_TIMEOUT_S, "socket_timeout": CONNECT_TIMEOUT_S}


def _sync_client(*, decode: bool) -> redis.Redis:
    settings = get_settings()
    url = settings.redis_url
    if url is None:
        import fakeredis

        return fakeredis.FakeRedis(server=_fake_server(), decode_responses=decode)
    options = _options(decode=decode, command_timeout=True)
    if settings.redis_cluster:
        return cast(redis.Redis, RedisCluster.from_url(url, retry=_retry(), **options))
    if settings.redis_sentinels:
        sentinel = Sentinel(settings.sentinel_addresses(), sentinel_kwargs=_sentinel_kwargs())
        return sentinel.master_for(
            settings.redis_sentinel_master, retry=_retry(), **_sentinel_options(url), **options
        )
    return redis.Redis.from_url(url, retry=_retry(), **options)


def _async_client(url: str, *, command_timeout: bool) -> aioredis.Redis:
    options = _options(decode=True, command_timeout=command_timeout)
    settings = get_settings()
    if settings.redis_sentinels:
        sentinel = AsyncSentinel(settings.sentinel_addresses(), sentinel_kwargs=_sentinel_kwargs())
        return sentinel.master_for(
            settings.redis_sentinel_master,
            retry=_async_retry(),
            **_sentinel_options(url),
            **options,
        )
    if settings.redis_cluster and command_timeout:
        cluster = AsyncRedisCluster.from_url(url, retry=_async_retry(), **options)
        return cast(aioredis.Redis, cluster)
    # Also the cluster's pub/sub listener: a plain connection to the node named, since a
    # PUBLISH on a cluster reaches every node's subscribers (and redis-py's asyncio
    # cluster client has no pub/sub).
    return aioredis.Redis.from_url(url, retry=_async_retry(), **options)


@lru_cache
def sync_redis() -> redis.Redis:
    return _sync_client(decode=True)


@lru_cache
def sync_redis_bytes() -> redis.Redis:
    """For binary values (the upstream answer cache). Timeouts bound a read the api makes;
    a failed cache read counts as a miss."""
    return _sync_client(decode=False)


@lru_cache
def async_redis() -> aioredis.Redis:
    """Every async command of a request: each waits at most `redis_command_timeout_s`."""
    url = get_settings().redis_url
    if url is None:
        import fakeredis

        return fakeredis.FakeAsyncRedis(server=_fake_server(), decode_responses=True)
    return _async_client(url, command_timeout=True)


@lru_cache
def async_pubsub_redis() -> aioredis.Redis:
    """Only for the result listener's pub/sub connection, which waits for messages without
    a read timeout (a quiet minute is not an outage); never for commands on a request."""
    url = get_settings().redis_url
    if url is None:
        return async_redis()
    return _async_client(url, command_timeout=False)


async def send_now(pipe: aioredis.client.Pipeline) -> Callable[[], Awaitable[list[Any]]]:
    """Write a non-transactional pipeline's commands to Redis now; return the reader of
    their replies, to await later. For a caller that must have its writes on their way
    before it goes on (the commit before an MCP answer) but need not wait for Redis.

    Unlike `pipe.execute()`, the commands are never sent twice: writing retries through a
    dropped connection as every command does, but a reply lost afterwards is an error, not
    a second run. Await the reader exactly once: it gives the connection back. Replies
    come unparsed (no response callbacks), an error reply in its place.

    On a Redis Cluster the pipeline's commands go to several nodes (their slots'), which
    only the cluster pipeline can route: it runs here, and the reader hands its replies.
    """
    if isinstance(pipe, AsyncClusterPipeline):
        replies = await pipe.execute(raise_on_error=False)

        async def cluster_replies() -> list[Any]:
            return list(replies)

        return cluster_replies
    pool = pipe.connection_pool
    connection = await pool.get_connection()
    commands = [args for args, _options in pipe.command_stack]

    async def send() -> None:
        await connection.send_packed_command(packed)

    async def reconnect(_error: Exception) -> None:
        await connection.disconnect()

    try:
        packed = connection.pack_commands(commands)  # raises on an argument it cannot encode
        await connection.retry.call_with_retry(send, reconnect)
    except BaseException:
        await pool.release(connection)
        raise

    async def read_replies() -> list[Any]:
        replies: list[Any] = []
        try:
            for _command in commands:
                try:
                    replies.append(await connection.read_response())
                except redis.ResponseError as error:
                    replies.append(error)
        except BaseException:
            await connection.disconnect()  # replies still unread: never reuse it
            raise
        finally:
            await pool.release(connection)
        return replies

    return read_replies


class LuaScript:
    """EVALSHA, after one SCRIPT LOAD per client; EVAL if the server lost the script.

    Loading first (rather than waiting for NOSCRIPT) also suits fakeredis's TCP server,
    which drops the connection after a NOSCRIPT error.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self._loaded: weakref.WeakSet[Any] = weakref.WeakSet()

    def run(self, client: redis.Redis, keys: Sequence[str], args: Sequence[Any]) -> Any:
        if client not in self._loaded:
            client.script_load(self.source)
            self._loaded.add(client)
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return client.eval(self.source, len(keys), *keys, *args)

    def queue(
        self, pipe: Pipeline | AsyncPipeline, keys: Sequence[str], args: Sequence[Any]
    ) -> None:
        """Add a call to a pipeline, as EVAL: a NOSCRIPT inside a pipeline cannot fall back.
        Sent as a bare command: redis-py's sync cluster pipeline refuses `eval()` itself
        but routes an EVAL by its keys."""
        pipe.execute_command("EVAL", self.source, len(keys), *keys, *args)

    async def run_async(
        self, client: aioredis.Redis, keys: Sequence[str], args: Sequence[Any]
    ) -> Any:
        if client not in self._loaded:
            await client.script_load(self.source)
            self._loaded.add(client)
        try:
            return await client.evalsha(self.sha, len(keys), *keys, *args)  # type: ignore[misc]
        except NoScriptError:
            return await client.eval(self.source, len(keys), *keys, *args)  # type: ignore[misc]


def reset_clients() -> None:
    """Forget cached clients (after Settings change, e.g. in tests)."""
    sync_redis.cache_clear()
    sync_redis_bytes.cache_clear()
    async_redis.cache_clear()
    async_pubsub_redis.cache_clear()


def persistence_problem(client: redis.Redis) -> str | None:
    """Why a crash of this Redis could lose more than about a second of usage events
    (the outbox and the counters live there until drained), or None when it keeps an AOF
    with `appendfsync everysec` or `always`."""
    try:
        config = cast(dict[str, str], client.config_get("append*"))
    except redis.RedisError as exc:
        return (
            f"cannot read the Redis persistence settings ({exc}); set GEOSVC_REDIS_AOF_CHECK"
            "=false only for a managed Redis whose AOF you have verified otherwise"
        )
    appendonly, fsync = config.get("appendonly"), config.get("appendfsync")
    if appendonly != "yes":
        return (
            "Redis runs without AOF (appendonly no): a crash would lose every usage event "
            "not yet in the ledger; run it with appendonly yes, appendfsync everysec "
            "(or always), or set GEOSVC_REDIS_AOF_CHECK=false"
        )
    if fsync not in ("everysec", "always"):
        return (
            f"Redis AOF is fsynced only by the OS (appendfsync {fsync}); use appendfsync "
            "everysec or always, or set GEOSVC_REDIS_AOF_CHECK=false"
        )
    return None


def require_persistent_redis() -> None:
    """Production start-up: refuse a Redis that could lose more than ~1 s of events."""
    settings = get_settings()
    if settings.is_development or not settings.redis_aof_check or settings.redis_url is None:
        return
    problem = persistence_problem(sync_redis())
    if problem is not None:
        raise SystemExit(f"refusing to start with GEOSVC_ENV=production: {problem}")
