"""Which workers can answer tool calls, as the workers themselves say in Redis.

A worker that consumes a tool queue checks its geodata at start (`geosvc worker` refuses
to start without it), then publishes, from its consumer loop's heartbeat, one field of a
Redis hash: its queues, the index version and dataset ids it answers from, and until when
the entry holds. A worker that stops consuming (dead, blocked, partitioned) stops
refreshing its entry, which then lapses. The api's /readyz and /metrics read the hash:
no fresh entry for a queue means no worker can answer that queue's calls.

One hash, not a key per worker: a reader needs one HGETALL, never a SCAN of a shared
Redis. Expiry is each entry's own `until` (wall clock, Unix seconds); readers drop lapsed
fields as they go.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.kit.config import get_settings

KEY = "tool-workers"
# Several heartbeats (liveness.HEARTBEAT_S) long: one late beat does not drop a worker.
ENTRY_TTL_S = 15.0


@dataclass(frozen=True)
class WorkerData:
    """What a worker answers from: the index format version and the dataset ids."""

    index_version: int
    datasets: dict[str, str]


@dataclass(frozen=True)
class ToolWorker:
    hostname: str
    queues: tuple[str, ...]
    data: WorkerData


def key() -> str:
    return f"{get_settings().redis_key_prefix}{KEY}"


def publish(client: Any, hostname: str, queues: Iterable[str], data: WorkerData) -> None:
    entry = {
        "queues": sorted(queues),
        "indexVersion": data.index_version,
        "datasets": data.datasets,
        "until": time.time() + ENTRY_TTL_S,
    }
    client.hset(key(), hostname, json.dumps(entry, sort_keys=True))


def withdraw(client: Any, hostname: str) -> None:
    client.hdel(key(), hostname)


def _parse(hostname: str, raw: str | bytes) -> tuple[ToolWorker, float] | None:
    try:
        entry = json.loads(raw)
        worker = ToolWorker(
            hostname=hostname,
            queues=tuple(str(queue) for queue in entry["queues"]),
            data=WorkerData(int(entry["indexVersion"]), dict(entry["datasets"])),
        )
        return worker, float(entry["until"])
    except (ValueError, KeyError, TypeError):
        return None  # another release's shape, or garbage: not a worker we can count on


def live_workers(client: Any) -> list[ToolWorker]:
    """Workers whose entry has not lapsed; lapsed or unreadable entries are removed."""
    now = time.time()
    live, lapsed = [], []
    for field, raw in client.hgetall(key()).items():
        hostname = field.decode() if isinstance(field, bytes) else str(field)
        parsed = _parse(hostname, raw)
        if parsed is not None and parsed[1] >= now:
            live.append(parsed[0])
        else:
            lapsed.append(field)
    if lapsed:
        client.hdel(key(), *lapsed)
    return sorted(live, key=lambda worker: worker.hostname)


def answering(
    workers: Iterable[ToolWorker], queues: Iterable[str], index_version: int
) -> dict[str, int]:
    """Per queue, how many of `workers` consume it with the index version this release
    reads (a worker of another version answers with other data: not counted)."""
    current = [worker for worker in workers if worker.data.index_version == index_version]
    return {queue: sum(queue in worker.queues for worker in current) for queue in queues}
