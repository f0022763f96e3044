"""Geodata tests run on the real indices, built once per session by `geosvc data build`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from app.geodata import service
from app.geodata.cli import register
from app.geodata.providers.embedded.data import GeoData


def geodata_cli() -> typer.Typer:
    """A throwaway app with the geodata commands, standing in for the main `geosvc`."""
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        pass

    register(app)
    return app


@pytest.fixture(scope="session")
def geodata_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    data_dir = tmp_path_factory.mktemp("geodata")
    result = CliRunner().invoke(geodata_cli(), ["data", "build", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    service.configure(data_dir)
    yield data_dir
    service.configure(None)


@pytest.fixture(scope="session")
def geodata(geodata_dir: Path) -> GeoData:
    return service.provider().data
