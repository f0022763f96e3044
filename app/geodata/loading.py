"""The embedded provider, loaded once per process: lazily under a lock on the first call
that needs it, or eagerly through `app.geodata.service.warm_up()`. Importing this module
loads no index and no numpy.

Below `service` and `areas`, which both read it: the area resolver the upstream provider
uses (app.geodata.areas) then needs nothing from `service`, which loads that provider.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from app.kit.config import get_settings

if TYPE_CHECKING:
    from app.geodata.providers.embedded import EmbeddedProvider

_lock = threading.Lock()
_provider: EmbeddedProvider | None = None
_data_dir: Path | None = None


def use_data_dir(data_dir: Path | None) -> None:
    """Load the indices under `data_dir` (None: Settings.data_dir) on the next call."""
    global _provider, _data_dir
    with _lock:
        _provider, _data_dir = None, data_dir


def provider() -> EmbeddedProvider:
    global _provider
    current = _provider
    if current is not None:
        return current
    with _lock:
        if _provider is None:
            from app.geodata.providers.embedded import EmbeddedProvider  # numpy: on use

            _provider = EmbeddedProvider.from_data_dir(_data_dir or get_settings().data_dir)
        return _provider


def loaded_provider() -> EmbeddedProvider | None:
    """The embedded provider if this process has loaded its indices, else None."""
    return _provider
