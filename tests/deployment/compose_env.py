"""docker-compose.yml's environment as compose would hand it to a container, from an
.env file: `${VAR}`, `${VAR:-default}` and `${VAR:?message}` (an unset or empty
required variable is an error, as in compose)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:[-?])(?P<arg>[^}]*))?\}")


class MissingVariable(LookupError):
    pass


def read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def interpolate(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        value = values.get(match["name"], "")
        if match["op"] == ":?" and not value:
            raise MissingVariable(match["name"])
        return value or (match["arg"] if match["op"] == ":-" else "")

    return VARIABLE.sub(one, text)


def required_variables(text: str) -> set[str]:
    return {match["name"] for match in VARIABLE.finditer(text) if match["op"] == ":?"}


def compose_file() -> str:
    return (ROOT / "docker-compose.yml").read_text(encoding="utf-8")


def rendered_compose(values: dict[str, str]) -> dict[str, Any]:
    return dict(yaml.safe_load(interpolate(compose_file(), values)))
