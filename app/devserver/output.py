"""What `geosvc dev` shows a person, and where the rest goes.

Until the demo key is announced the terminal gets only `geosvc dev`'s own lines; the
api's log (its access log included), the workers' and beat's go to `<data dir>/dev.log`.
After it the terminal also gets warnings and errors from every process, so an e-mail
written to the worker's log (no SMTP) shows up there, while the access log and the
routine INFO lines stay in the file. An error is shown at any time.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import threading
from pathlib import Path

from app.observability.logs import RedactCredentials, TextFormatter

LOG_FILE = "dev.log"
# The start of a record in our text log format (app/observability/logs.py, TextFormatter):
# continuation lines (an e-mail's body, a traceback) belong to the record before them.
_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")
_SHOWN_LEVELS = {"WARNING", "ERROR", "CRITICAL"}


class DevOutput:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOG_FILE
        self._file = self.path.open("a", encoding="utf-8", errors="replace")
        self._lock = threading.Lock()
        self.announced = threading.Event()

    def write(self, line: str, *, show: bool) -> None:
        """One line to the log file, and to the terminal when `show` (and, before the key,
        only an error)."""
        with self._lock:
            self._file.write(line)
            self._file.flush()
            if show:
                sys.stderr.write(line)
                sys.stderr.flush()

    def relay(self, child: subprocess.Popen[bytes]) -> None:
        """Copy a child's output (a thread per child) until it exits."""
        threading.Thread(target=self._relay, args=(child,), name="relay", daemon=True).start()

    def _relay(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdout is not None
        level = "ERROR"  # raw lines before any record (a crash's traceback) are shown
        for raw in child.stdout:
            line = raw.decode("utf-8", errors="replace")
            record = _RECORD.match(line)
            if record:
                level = record.group(1)
            shown = level in _SHOWN_LEVELS and (self.announced.is_set() or level != "WARNING")
            self.write(line, show=shown)

    def capture_logging(self) -> None:
        """This process's log records: every one to the file, warnings and errors to the
        terminal once the key is out (errors at once). After `create_app`, which sets up
        the root logger's stderr handler."""
        file_handler = logging.StreamHandler(self._file)
        file_handler.setFormatter(TextFormatter())
        file_handler.addFilter(RedactCredentials())
        file_handler.set_name("geosvc-dev-file")
        root = logging.getLogger()
        root.addHandler(file_handler)
        for handler in root.handlers:
            if handler.get_name() == "geosvc":
                handler.addFilter(self._terminal_filter)

    def _terminal_filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        return self.announced.is_set() and record.levelno >= logging.WARNING
