"""docs/SETTINGS.md, written from app/kit/config.py: every setting's environment variable,
type, default and description. The description is the comment above the field in
config.py (a comment heads every field after it up to a blank line) and any comment at
the end of its line, so the reference says what the code's readers read."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from pydantic import SecretStr
from pydantic_core import PydanticUndefined

from app.kit import config
from app.kit.config import Settings

HEADER = """\
# Settings reference

Every setting of every `geosvc` process, read from the environment (prefix `GEOSVC_`)
or a `.env` file in the working directory. Written from `app/kit/config.py` by
`.venv/bin/geosvc settings-reference`; a test keeps it current. Lists and mappings are
JSON (`GEOSVC_ALLOWED_HOSTS='["api.example.com"]'`). What production requires:
[.env.example](../.env.example) and `geosvc check-config` (docs/DEPLOYMENT.md). Secrets
(type `SecretStr`) are never logged.

| setting | type | default | what |
|---|---|---|---|
"""


def field_comments() -> dict[str, str]:
    """Each field of Settings -> the comment lines that describe it."""
    source = Path(inspect.getfile(config)).read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    settings_class = next(
        node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Settings"
    )
    found: dict[str, str] = {}
    heading: tuple[str, str] | None = None  # the field whose comment heads this group
    previous_end = settings_class.lineno
    for node in settings_class.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            previous_end = node.end_lineno or node.lineno
            heading = None
            continue
        gap = lines[previous_end : node.lineno - 1]  # between the last statement and this
        comment = [line.strip().removeprefix("#").strip() for line in gap if line.strip()]
        last = lines[(node.end_lineno or node.lineno) - 1]
        inline = last.split("  # ", 1)[1].strip() if "  # " in last else ""
        if comment:
            heading = (node.target.id, " ".join(part for part in comment if part))
            found[node.target.id] = " ".join(filter(None, [heading[1], inline]))
        elif any(not line.strip() for line in gap) or heading is None:
            heading = None
            found[node.target.id] = inline
        else:  # under another field's comment, with no blank line between: its group
            found[node.target.id] = inline or f"See `GEOSVC_{heading[0].upper()}`."
        previous_end = node.end_lineno or node.lineno
    return found


def _type(name: str) -> str:
    annotation = Settings.model_fields[name].annotation
    text = getattr(annotation, "__name__", None) if annotation is not None else None
    shown = str(annotation) if text is None or "[" in str(annotation) else text
    for noise in ("typing.", "pathlib.", "pydantic.types.", "decimal.", "app.kit.config."):
        shown = shown.replace(noise, "")
    return shown.replace("|", "\\|")


def _default(name: str) -> str:
    default = Settings.model_fields[name].default
    if default is PydanticUndefined or default is None:
        return "—"
    if isinstance(default, SecretStr):
        return "(secret)"
    if isinstance(default, set | list | dict):
        shown = str(sorted(default) if isinstance(default, set) else default)
    else:
        shown = str(default)
    return f"`{shown}`".replace("|", "\\|")


def _cell(comments: dict[str, str], name: str) -> str:
    return comments.get(name, "").replace("|", "\\|")


def settings_reference() -> str:
    comments = field_comments()
    rows = [
        f"| `GEOSVC_{name.upper()}` | {_type(name)} | {_default(name)} | {_cell(comments, name)} |"
        for name in Settings.model_fields
    ]
    return HEADER + "\n".join(rows) + "\n"
