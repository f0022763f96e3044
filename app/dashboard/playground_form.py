"""The playground's form of a tool, built from the input schema tools/list publishes (so
the form cannot drift from what an agent is told), and the arguments read back from it
in their JSON types. A structured argument (an object, a list of objects, a choice of
shapes) is a JSON text field; the strict argument models judge every value, exactly as
they judge an MCP call's."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from app.kit.errors import InvalidArgument

# A field's text is at most this long (the request's body limit stands behind it).
MAX_FIELD_CHARS = 20_000
FIELD_PREFIX = "arg."
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
# Digits only: float() would also take "nan", "inf" and "1_000", which are no numbers of ours
# (left as text, the argument model refuses them by name).
_NUMBER = re.compile(r"[+-]?(?:[0-9]{1,300}(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


@dataclass(frozen=True)
class FormField:
    name: str
    kind: str  # "text", "integer", "number", "boolean", "choice", "list" or "json"
    required: bool
    description: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    @property
    def input_name(self) -> str:
        return FIELD_PREFIX + self.name


def _types(prop: dict[str, Any]) -> list[str]:
    declared = prop.get("type")
    named = declared if isinstance(declared, list) else [declared] if declared else []
    return [t for t in named if t != "null"]


def _kind(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return "choice"
    types = _types(prop)
    if len(types) != 1 or any(k in prop for k in ("anyOf", "oneOf", "$ref")):
        return "json"
    kind = types[0]
    if kind == "array":
        items = prop.get("items", {})
        scalar = _types(items) in (["string"], ["integer"], ["number"]) or "enum" in items
        return "list" if scalar else "json"
    return kind if kind in ("string", "integer", "number", "boolean") else "json"


def form_fields(input_schema: dict[str, Any], leave_out: tuple[str, ...] = ()) -> list[FormField]:
    """One field per argument of `input_schema`, in its order; `leave_out`: the list
    arguments of a tool's batch form (the playground runs one call)."""
    required = set(input_schema.get("required", []))
    fields = []
    for name, prop in input_schema.get("properties", {}).items():
        if name in leave_out:
            continue
        kind = _kind(prop)
        fields.append(
            FormField(
                name=name,
                kind="text" if kind == "string" else kind,
                required=name in required,
                description=str(prop.get("description", "")),
                choices=tuple(str(c) for c in prop.get("enum", ())),
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
            )
        )
    return fields


def form_values(fields: list[FormField], arguments: dict[str, Any]) -> dict[str, str]:
    """The text of each field for `arguments` (an example call, or what was run)."""
    values: dict[str, str] = {}
    for field in fields:
        if field.name not in arguments or arguments[field.name] is None:
            continue
        value = arguments[field.name]
        if field.kind == "json":
            values[field.name] = json.dumps(value, ensure_ascii=False)
        elif field.kind == "list" and isinstance(value, list):
            values[field.name] = ", ".join(str(v) for v in value)
        elif field.kind == "boolean":
            values[field.name] = "true" if value else "false"
        else:
            values[field.name] = str(value)
    return values


def arguments_of(fields: list[FormField], submitted: dict[str, str]) -> dict[str, Any]:
    """The call's arguments from the submitted texts (field name -> text); an empty field
    is left out (the argument's default applies). A text that is not its field's type is
    passed on as text, for the argument model to refuse by name."""
    arguments: dict[str, Any] = {}
    for field in fields:
        text = submitted.get(field.name, "")
        if len(text) > MAX_FIELD_CHARS:
            raise InvalidArgument(f"{field.name}: at most {MAX_FIELD_CHARS:,} characters")
        if not text.strip():
            continue
        arguments[field.name] = _read(field, text.strip())
    return arguments


def _read(field: FormField, text: str) -> Any:
    if field.kind == "json":
        try:
            return json.loads(text)
        except ValueError:
            raise InvalidArgument(f"{field.name}: must be JSON, an object or a list") from None
    if field.kind == "list":
        return [part.strip() for part in text.split(",") if part.strip()]
    if field.kind == "boolean":
        return {"true": True, "false": False}.get(text.lower(), text)
    if field.kind == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if field.kind in ("integer", "number") and _NUMBER.fullmatch(text):
        number = float(text)
        return number if math.isfinite(number) else text
    return text
