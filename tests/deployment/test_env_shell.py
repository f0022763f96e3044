""".env.example as an operator fills it in, read three ways (issue 55, item 5): a shell's
`set -a; . ./.env` (bash) gives every variable the value the app's reader (python-dotenv,
as pydantic-settings reads `.env`) gives it, with no error on the way."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from dotenv import dotenv_values

from tests.deployment.compose_env import ROOT

EXAMPLE = ROOT / ".env.example"
# A comment's example of a filled-in line: `# e.g. NAME=value ...`
EXAMPLE_LINE = re.compile(r"^# e\.g\. (?P<name>[A-Z_]+)=(?P<value>'[^']*'|\S+)")


def filled_in(text: str) -> str:
    """The file with each `e.g.` line of its comments written in, as the file says."""
    examples = {m["name"]: m["value"] for m in map(EXAMPLE_LINE.match, text.splitlines()) if m}
    lines = []
    for line in text.splitlines():
        name = line.partition("=")[0]
        lines.append(f"{name}={examples[name]}" if name in examples else line)
    return "\n".join(lines) + "\n"


def sourced_by_bash(path: Path) -> dict[str, str]:
    """What `set -a; . path` exports, by name (NUL-separated, so any value survives)."""
    script = 'set -a; . "$1" || exit 9; env -0'
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", script, "bash", str(path)],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=30,
    )
    assert (result.returncode, result.stderr) == (0, b""), result.stderr.decode()
    entries = (item.decode().partition("=") for item in result.stdout.split(b"\0") if item)
    return {name: value for name, _, value in entries}


def assert_read_alike(path: Path) -> dict[str, str]:
    by_app = {name: value or "" for name, value in dotenv_values(path).items()}
    by_shell = sourced_by_bash(path)
    assert {name: by_shell.get(name) for name in by_app} == by_app
    return by_app


def test_the_example_as_shipped_sources_in_a_shell() -> None:
    assert_read_alike(EXAMPLE)


def test_the_example_filled_in_as_it_says_sources_in_a_shell(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(filled_in(EXAMPLE.read_text(encoding="utf-8")), encoding="utf-8")

    values = assert_read_alike(env)

    assert values["GEOSVC_MAIL_FROM"] == "Geospatial Data Service <no-reply@example.com>"
