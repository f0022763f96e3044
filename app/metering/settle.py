"""What a commit's round trip does when part of it fails (`service.send_commit`): on a
Redis Cluster its writes go to several nodes, any of which may be failing over."""

from __future__ import annotations

import logging
from typing import Any

import redis
from redis.exceptions import AskError, BusyLoadingError, ClusterError, ReadOnlyError, TryAgainError

from app.kit.redis_client import async_redis
from app.metering.scripts import commit_script

logger = logging.getLogger(__name__)


async def commit_again(keys: list[str], args: list[str | int], failure: Exception) -> Any:
    """The commit's reply was an error: run it once more (the cluster client follows a
    moved slot) where that cannot count twice: a keyed commit (a second run of one that
    ran counts nothing) or one a node refused unrun. Else, or failing again: `failure`."""
    unrun = AskError | TryAgainError | ClusterError | ReadOnlyError | BusyLoadingError
    if len(keys) < 3 and not isinstance(failure, unrun):
        raise failure
    try:
        return await commit_script.run_async(async_redis(), keys, args)
    except (redis.RedisError, redis.RedisClusterException):
        raise failure from None


def note_failed_writes(replies: list[Any], reservation_id: str) -> None:
    """Writes that rode with a counted commit (the request log's entry, the DEL of the
    call's result) and failed: logged, never the call's failure."""
    failed = [reply for reply in replies if isinstance(reply, Exception)]
    if failed:
        logger.warning(
            "commit of %s counted; %d other write(s) of its round trip failed: %s",
            reservation_id,
            len(failed),
            failed[0],
        )
