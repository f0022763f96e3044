"""Re-read Settings everywhere they are cached (tests repoint a process; `geosvc dev`
sets its embedded Redis URL after start)."""

from __future__ import annotations

from app import queue
from app.kit.config import get_settings
from app.kit.db import engine_for
from app.kit.redis_client import reset_clients


def reload_settings() -> None:
    get_settings.cache_clear()
    engine_for.cache_clear()
    reset_clients()
    queue.configure()
