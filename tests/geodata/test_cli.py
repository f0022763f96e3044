from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from tests.geodata.conftest import geodata_cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(geodata_cli(), list(args))
    return result.exit_code, result.stdout


class TestToolCommand:
    def test_prints_the_json_result(self, geodata_dir: Path) -> None:
        code, out = run("tool", "get_population", '{"postal_code": "10001"}')
        assert code == 0
        assert json.loads(out)["population"] == 27004

    def test_static_map_writes_the_png(self, geodata_dir: Path, tmp_path: Path) -> None:
        target = tmp_path / "map.png"
        arguments = (
            '{"center": {"lat": 40.7, "lon": -74.0}, "zoom": 10, "width": 320, "height": 200}'
        )
        code, out = run("tool", "static_map", arguments, "--out", str(target))
        assert code == 0
        assert json.loads(out[out.index("{") :])["zoom"] == 10
        assert Image.open(io.BytesIO(target.read_bytes())).size == (320, 200)

    def test_errors_print_the_envelope_and_exit_1(self, geodata_dir: Path) -> None:
        code, out = run("tool", "get_population", '{"postal_code": 94103.5}')
        assert code == 1
        assert json.loads(out)["error"]["code"] == "INVALID_ARGUMENT"
        code, out = run("tool", "geocode", "not json")
        assert code == 1
        assert "bad JSON" in json.loads(out)["error"]["message"]


class TestBuildCommand:
    def test_up_to_date_indices_are_not_rebuilt(self, geodata_dir: Path) -> None:
        result = CliRunner().invoke(
            geodata_cli(), ["data", "build", "--data-dir", str(geodata_dir)]
        )
        assert result.exit_code == 0
        assert "up to date" in result.output
