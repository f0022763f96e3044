"""One object per Settings: built on first use, built again when the settings are
reloaded (tests repoint a process; `geosvc dev` sets its embedded Redis URL after start)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from app.kit.config import Settings, get_settings

T = TypeVar("T")


class PerSettings(Generic[T]):
    def __init__(self, build: Callable[[Settings], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._current: tuple[Settings, T] | None = None

    def get(self) -> T:
        settings = get_settings()
        current = self._current
        if current is None or current[0] is not settings:
            with self._lock:
                current = self._current
                if current is None or current[0] is not settings:
                    current = self._current = (settings, self._build(settings))
        return current[1]

    def built(self) -> T | None:
        """The object if one was built (for invalidations, which need none built)."""
        current = self._current
        return current[1] if current is not None else None
