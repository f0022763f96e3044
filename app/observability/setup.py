"""Around `geosvc api` and `geosvc worker`: one metrics directory for all their processes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.kit.config import Settings
from app.observability import exposition
from app.observability.logs import configure_logging


@contextmanager
def metrics_process_group(settings: Settings) -> Iterator[None]:
    """Their processes share one metrics directory (multiprocess mode, whatever the
    number of processes); removed on exit if temporary."""
    exposition.require_metrics_protection(settings)
    configure_logging(settings.log_format, settings.log_level)
    path = exposition.prepare_multiprocess_dir(settings)
    try:
        yield
    finally:
        exposition.remove_multiprocess_dir(path, settings)
