"""Upstream answers the shared cache already holds, computed in the api process.

A tool that goes to an upstream provider stores the provider's answers in Redis (the
answer cache in `app.upstream.client`). When everything a call needs is there, the api
builds the result itself, with the same provider code the worker would run but
`only_cached_answers()`: no Celery hop, no request to the provider (anything missing
raises CacheMiss and the call goes to a worker as usual). The caller still pays like any
successful call: `call_tool` reserved before and commits after.

Only tools answered upstream-first qualify: an embedded lookup needs the indices, which
the api process does not load.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from app.geodata import service as geodata
from app.geodata.catalogue import policy
from app.kit.config import get_settings
from app.kit.errors import AppError
from app.upstream.client import CacheMiss, only_cached_answers

logger = logging.getLogger(__name__)


def answered_upstream(name: str) -> bool:
    # Never embedded-then-upstream: its first answer needs the indices.
    return policy(name, get_settings()) in ("upstream", "upstream-then-embedded")


def _reply_from_cache(name: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        with only_cached_answers():
            result = geodata.execute(name, arguments)
    except CacheMiss:
        return None
    except AppError as exc:  # e.g. NOT_FOUND from a cached empty answer
        return {"error": exc.to_body()["error"]}
    except Exception:
        logger.exception("cached answer for %s failed; the worker will try", name)
        return None
    return {"structured": result.structured, "png": None}


async def cached_reply(name: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """The worker's reply for this call built from the answer cache, or None on a miss.

    Run on the event loop, not in a thread: one GET on the local Redis (bounded by the
    cache client's socket timeout; a timeout reads as a miss) costs less than the two
    GIL hand-overs of a thread hop, which on a busy loop add milliseconds to every call.
    """
    if not answered_upstream(name):
        return None
    return _reply_from_cache(name, arguments)
