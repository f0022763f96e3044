"""Can this process answer tool calls from its geodata? What `geosvc worker` checks before
it consumes a tool queue: the indices present under GEOSVC_DATA_DIR, of this release's
format and dataset packages, and loadable. A worker never builds them itself (that is
`geosvc data build`, an init step before the workers start: docs/OPERATIONS.md, "A worker
without its data"): a worker that took work without its data answered INTERNAL to every
call and said nothing of why.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from app.geodata import service
from app.geodata.indices import store
from app.geodata.providers.embedded import attribution
from app.kit.redis_client import sync_redis
from app.queue import tool_workers
from app.queue.liveness import Announcer
from app.queue.tool_workers import WorkerData


class DataNotReady(RuntimeError):
    """The one line a worker refuses to start with: what is wrong, the setting, the fix."""


def _versions_found(data_dir: Path) -> list[str]:
    root = store.index_root(data_dir)
    try:
        return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name.startswith("v"))
    except OSError:
        return []


def data_problem(data_dir: Path) -> str | None:
    """What keeps the indices under `data_dir` from answering, or None (not loaded here)."""
    directory = store.index_dir(data_dir)
    wanted = f"v{store.INDEX_VERSION}"
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        version, packages = meta.get("version"), meta.get("packages")
    except (FileNotFoundError, NotADirectoryError):
        found = [name for name in _versions_found(data_dir) if name != wanted]
        if found:
            return f"are of another release ({', '.join(found)}; this release reads {wanted})"
        return f"are missing (no {directory / 'meta.json'})"
    except (OSError, ValueError, AttributeError) as exc:
        return f"cannot be read ({directory / 'meta.json'}: {type(exc).__name__})"
    expected = store.expected_stamp()
    if version != expected["version"]:
        return f"are version {version} (this release reads {expected['version']})"
    if packages != expected["packages"]:
        changed = sorted(
            name
            for name in set(expected["packages"]) | set(packages or {})
            if (packages or {}).get(name) != expected["packages"].get(name)
        )
        return f"were built from other dataset packages ({', '.join(changed)})"
    return None


def require_data(data_dir: Path) -> WorkerData:
    """Check and load the indices (never building them) or raise DataNotReady; what the
    loaded data answers with."""
    problem = data_problem(data_dir)
    if problem is None:
        try:
            service.configure(data_dir)
            data = service.provider().data
        except Exception as exc:  # any failure to load is the same refusal, with its cause
            problem = f"cannot be loaded ({type(exc).__name__}: {exc})"
        else:
            return worker_data(data.meta)
    raise DataNotReady(
        f"GEOSVC_DATA_DIR={data_dir}: the geodata indices {problem}; this worker takes no "
        f"tool calls without them. Build them with `geosvc data build --data-dir {data_dir}`"
    )


def worker_data(meta: dict[str, object]) -> WorkerData:
    return WorkerData(
        index_version=int(str(meta.get("version", 0))),
        datasets={
            "places": attribution.places_dataset(meta),
            "places+borders": attribution.reverse_dataset(meta),
            "basemap": attribution.basemap_dataset(meta),
        },
    )


def announcer(queues: list[str], data: WorkerData) -> Announcer:
    """What this worker announces in Redis while it consumes (app.queue.tool_workers)."""
    name = f"{socket.gethostname()}:{os.getpid()}"
    return Announcer(
        publish=lambda: tool_workers.publish(sync_redis(), name, queues, data),
        withdraw=lambda: tool_workers.withdraw(sync_redis(), name),
    )
