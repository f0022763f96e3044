"""Geodata tests run on the real indices, built once per session by `geosvc data build`."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from app.cli import cli
from app.geodata import service
from app.geodata.providers.embedded.data import GeoData


def geodata_cli() -> typer.Typer:
    """The real `geosvc` command."""
    return cli


@pytest.fixture(scope="session")
def geodata(geodata_dir: Path) -> GeoData:
    return service.provider().data
