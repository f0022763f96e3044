"""Regenerate both clients from the HTTP data API's OpenAPI document (`make clients`).

1. clients/openapi.json: the document as a default deployment serves it at /v1/openapi.json
   (every tool on the embedded datasets).
2. clients/python/geosvc_client/generated/: openapi-python-client (pinned in
   clients/python/generator.lock, installed into .cache/clients/venv), formatted by our ruff.
3. clients/typescript/src/schema.d.ts: openapi-typescript (pinned in
   clients/typescript/package-lock.json, installed by `npm ci`).

The hand-written layers (geosvc_client/service.py, src/index.ts) are not touched.
`generate(into)` writes the same files under another root: tests/clients/test_generated.py
compares them with the committed ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "clients"
GENERATOR_VENV = ROOT / ".cache" / "clients" / "venv"
GENERATOR_LOCK = CLIENTS / "python" / "generator.lock"
PYTHON_PACKAGE = Path("python") / "geosvc_client" / "generated"
TS_SCHEMA = Path("typescript") / "src" / "schema.d.ts"
TS_DIR = CLIENTS / "typescript"
INSTALL_TIMEOUT_S = 600


def openapi_document() -> dict[str, object]:
    """The document of a default deployment, whatever this shell's GEOSVC_ variables say."""
    from app.kit.config import Settings
    from app.v1.openapi import openapi_document as build

    for name in [name for name in os.environ if name.startswith("GEOSVC_")]:
        del os.environ[name]
    return build(Settings(_env_file=None))  # type: ignore[call-arg]


def install_generators() -> None:
    """The pinned generators, each once (idempotent)."""
    python = GENERATOR_VENV / "bin" / "python"
    stamp = GENERATOR_VENV / ".installed"
    if not stamp.exists() or stamp.read_text() != GENERATOR_LOCK.read_text():
        subprocess.run([sys.executable, "-m", "venv", str(GENERATOR_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--require-hashes"]
            + ["-r", str(GENERATOR_LOCK)],
            check=True,
            timeout=INSTALL_TIMEOUT_S,
        )
        stamp.write_text(GENERATOR_LOCK.read_text())
    if not (TS_DIR / "node_modules" / ".bin" / "openapi-typescript").exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=TS_DIR,
            check=True,
            timeout=INSTALL_TIMEOUT_S,
            capture_output=True,
        )


def generate(into: Path) -> None:
    """Both clients' generated code under `into` (a copy of clients/'s layout)."""
    install_generators()
    into.mkdir(parents=True, exist_ok=True)
    document = into / "openapi.json"
    document.write_text(json.dumps(openapi_document(), indent=1, ensure_ascii=False) + "\n")
    with tempfile.TemporaryDirectory(prefix="geosvc-client-") as scratch:
        package = Path(scratch) / "generated"
        # ruff on PATH: the generator formats its output with it (ours, pinned in the dev lock)
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        subprocess.run(
            [str(GENERATOR_VENV / "bin" / "openapi-python-client"), "generate"]
            + ["--path", str(document), "--meta", "none", "--output-path", str(package)],
            check=True,
            capture_output=True,
            env={**os.environ, "PATH": path},
        )
        target = into / PYTHON_PACKAGE
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(package, target, ignore=shutil.ignore_patterns(".ruff_cache"))
    schema = into / TS_SCHEMA
    schema.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [str(TS_DIR / "node_modules" / ".bin" / "openapi-typescript"), str(document)]
        + ["--default-non-nullable", "false", "--output", str(schema)],
        check=True,
        capture_output=True,
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    generate(CLIENTS)
    print(f"regenerated {PYTHON_PACKAGE} and {TS_SCHEMA} from clients/openapi.json")
