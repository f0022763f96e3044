"""A pickle reader that refuses every class: only plain data types come back.

zipsearch ships its table as a pickle. Reading a pickle with the standard loader can run
arbitrary code, so the index builder reads it through `load_plain`, which resolves no
globals at all: dicts, lists, tuples, sets, str, bytes, int, float, bool and None only.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, NoReturn


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> NoReturn:
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: plain data types only")


def load_plain(path: Path) -> Any:
    with path.open("rb") as handle:
        return _PlainUnpickler(handle).load()
