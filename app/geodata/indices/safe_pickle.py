"""Pickle readers that resolve no class: only plain data types come back.

zipsearch ships its table as a pickle, babel its CLDR locale data. Reading a pickle with
the standard loader can run arbitrary code, so the index builder reads them through
`load_plain`, which resolves no globals at all (dicts, lists, tuples, sets, str, bytes,
int, float, bool and None only), or `load_plain_parts`, which puts an inert placeholder
where the pickle names a class (babel's date patterns and plural rules, which we skip).
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


class Opaque:
    """Stands in for any object of a class: keeps its arguments and state, runs nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args

    def __setstate__(self, state: Any) -> None:
        self.state = state


class _OpaqueUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> type[Opaque]:
        return Opaque


def load_plain_parts(path: Path) -> Any:
    with path.open("rb") as handle:
        return _OpaqueUnpickler(handle).load()
