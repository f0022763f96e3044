"""The OpenAPI contract: schemathesis, every check and every phase (the settings and the
reasons for each exception are in schemathesis.toml beside this file), against a real
uvicorn server on PostgreSQL, signed in. Passes with 0 failures, 0 errors, 0 warnings.

Run alone: `pytest -m contract` (about 30-40 s per schema on a busy machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.factories import sign_up
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.contract

CONFIG = Path(__file__).with_name("schemathesis.toml")
# Fixed, so that a finding in CI reproduces by hand; try others with CONTRACT_SEED.
SEED = int(os.environ.get("CONTRACT_SEED", "1"))
RUN_TIMEOUT_S = 240


# Where the live server serves each OpenAPI document.
SCHEMAS = [
    pytest.param("/openapi.json", id="control-plane"),
    pytest.param(
        "/v1/openapi.json",
        id="v1",
        marks=pytest.mark.skip(
            reason="the /v1 data API is not on this branch yet: remove this mark when it "
            "lands, and give its security scheme the API key in schemathesis.toml"
        ),
    ),
]


def run_schemathesis(schema_url: str, env: dict[str, str], report: Path) -> tuple[dict, str]:
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(CONFIG),
        "--no-color",
        "run",
        schema_url,
        "--seed",
        str(SEED),
        "--report",
        "json",
        "--report-json-path",
        str(report),
    ]
    # cwd: the run's own folder, for anything schemathesis writes next to it
    done = subprocess.run(
        command,
        env=env,
        cwd=report.parent,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    assert report.exists(), output
    return json.loads(report.read_text()), output


# The contract holds on the production database (PostgreSQL rejects what SQLite stores,
# e.g. a NUL in a string); one backend keeps the run within CI's budget.
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
@pytest.mark.parametrize("schema_path", SCHEMAS)
def test_schema_holds_against_the_live_server(
    live_server: LiveServer, http: httpx.Client, schema_path: str, tmp_path: Path
) -> None:
    sign_up(http)
    key = http.post("/api-keys", json={"name": "contract"})
    assert key.status_code == 201, key.text
    env = {
        **os.environ,
        "CONTRACT_SESSION": http.cookies["svc_session"],
        "CONTRACT_API_KEY": key.json()["plaintext"],
    }

    report, output = run_schemathesis(f"{live_server.url}{schema_path}", env, tmp_path / "run.json")

    operations = report["operations"]
    assert operations["selected"] > 0, output
    assert operations["tested"] == operations["selected"], output
    assert report["failures"] == [], output
    assert report["errors"] == [], output
    assert {name: ops for name, ops in report["warnings"].items() if ops} == {}, output
    assert report["exit_code"] == 0, output
