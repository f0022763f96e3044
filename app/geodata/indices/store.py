"""Where the indices live on disk, how they are stamped, written and read back.

Layout: `<data_dir>/indices/v<INDEX_VERSION>/` with one `.npy` file per array (read back
memory-mapped, so start-up is fast and several worker processes share the pages),
`tables.json` for the small tables and `meta.json`, the version stamp: the index format
version plus the version of every dataset package. A stamp that does not match the
installed packages means the indices are stale and are rebuilt. No pickles are written
or read (`allow_pickle=False`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.geodata.indices.admin1_build import NPM_PACKAGE, NPM_VERSION
from app.geodata.indices.sources import package_versions
from app.geodata.indices.version import INDEX_VERSION as INDEX_VERSION

# -- format constants: what the numbers in the arrays mean -----------------------------------

# f_kind: what a feature is
KIND_CITY, KIND_ADMIN1, KIND_COUNTRY, KIND_POSTAL, KIND_AIRPORT = range(5)
# key_quality: how a name key matches its feature
Q_NAME, Q_ALTERNATE, Q_CODE = 0, 1, 2
# zip_kind: the USPS type of a ZIP code
ZIP_KINDS = ("STANDARD", "PO BOX", "UNIQUE", "MILITARY")
# airport_type: OurAirports' class of an airport (0: none known); airport_scheduled:
# scheduled airline service (1), none (0), unknown (-1)
AIRPORT_TYPES = (
    "",
    "large_airport",
    "medium_airport",
    "small_airport",
    "heliport",
    "seaplane_base",
    "balloonport",
    "closed",
)
# basemap layers (rings, but a river or a border line is a line), and the highest zoom
# served by each level of detail (static_map's zoom stops at 12). Up to zoom 8 land is
# Natural Earth's countries (LAYER_COUNTRY, outlines drawn as borders); from
# COAST_FIRST_LEVEL on it is GSHHG's shoreline (LAYER_LAND, no outline) with the
# countries' and states' borders as lines.
LAYER_COUNTRY, LAYER_STATE, LAYER_LAKE, LAYER_ISLAND, LAYER_RIVER = range(5)
LAYER_LAND, LAYER_BORDER, LAYER_STATE_LINE = 5, 6, 7
LEVEL_MAX_ZOOM = (2, 5, 8, 10, 12)
COAST_FIRST_LEVEL = 3


def level_for_zoom(zoom: int) -> int:
    return next((i for i, top in enumerate(LEVEL_MAX_ZOOM) if zoom <= top), len(LEVEL_MAX_ZOOM) - 1)


def index_root(data_dir: Path) -> Path:
    return data_dir / "indices"


def index_dir(data_dir: Path) -> Path:
    return index_root(data_dir) / f"v{INDEX_VERSION}"


def expected_stamp() -> dict[str, Any]:
    packages = {**package_versions(), f"{NPM_PACKAGE} (npm)": NPM_VERSION}
    return {"version": INDEX_VERSION, "packages": packages}


def is_current(directory: Path) -> bool:
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    stamp = expected_stamp()
    return bool(
        meta.get("version") == stamp["version"] and meta.get("packages") == stamp["packages"]
    )


@contextmanager
def build_lock(data_dir: Path) -> Iterator[None]:
    """One builder at a time across processes (api and worker processes may all start cold)."""
    root = index_root(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    with (root / "build.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_index(
    data_dir: Path,
    arrays: Mapping[str, npt.NDArray[Any]],
    tables: Mapping[str, Any],
    meta: Mapping[str, Any],
) -> Path:
    """Write into a temporary directory, then swap it in with a rename."""
    root = index_root(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
    for name, array in arrays.items():
        np.save(staging / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
    (staging / "tables.json").write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")
    (staging / "meta.json").write_text(json.dumps(dict(meta), indent=2), encoding="utf-8")
    target = index_dir(data_dir)
    if target.exists():
        retired = Path(tempfile.mkdtemp(prefix=".retired-", dir=root))
        os.replace(target, retired / "old")
        shutil.rmtree(retired, ignore_errors=True)
    os.replace(staging, target)
    return target


@dataclass(frozen=True)
class RawIndex:
    arrays: dict[str, npt.NDArray[Any]]
    tables: dict[str, Any]
    meta: dict[str, Any]


def read_index(directory: Path) -> RawIndex:
    arrays = {
        path.stem: np.load(path, mmap_mode="r", allow_pickle=False)
        for path in directory.glob("*.npy")
    }
    tables = json.loads((directory / "tables.json").read_text(encoding="utf-8"))
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    return RawIndex(arrays=arrays, tables=tables, meta=meta)


class StringTable:
    """Many short strings as one UTF-8 blob plus offsets: compact, and loads without parsing."""

    def __init__(self, blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self._blob = memoryview(np.asarray(blob).data).cast("B")
        self._offsets = np.asarray(offsets)  # a plain view: np.memmap's indexing is slow

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index: int) -> str:
        start, end = int(self._offsets[index]), int(self._offsets[index + 1])
        return bytes(self._blob[start:end]).decode("utf-8")

    @staticmethod
    def encode(strings: Sequence[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        return blob, offsets

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]], name: str) -> StringTable:
        return cls(arrays[f"{name}_blob"], arrays[f"{name}_off"])
