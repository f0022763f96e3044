"""Pydantic validation errors as one short message a person or an agent can act on.

The one formatter for every surface: tool arguments, JSON request bodies, dashboard forms.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

MAX_PROBLEMS = 3


def describe_errors(errors: Sequence[Mapping[str, Any]], *, known: Collection[str] = ()) -> str:
    """`errors` as from `ValidationError.errors()`. `known`: the fields a top-level unknown
    field is told about."""
    problems = [_describe(error, known) for error in errors[:MAX_PROBLEMS]]
    more = len(errors) - MAX_PROBLEMS
    if more > 0:
        problems.append(f"and {more} more problem{'s' if more > 1 else ''}")
    return "; ".join(problems)


def _describe(error: Mapping[str, Any], known_fields: Collection[str]) -> str:
    loc = tuple(error.get("loc") or ())
    where = ".".join(str(part) for part in loc) or "arguments"
    kind = error.get("type", "")
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    value = error.get("input")
    field = str(loc[-1]) if loc else ""
    if kind == "missing":
        return f"{where}: is required"
    if kind == "extra_forbidden":
        known = ", ".join(known_fields) if len(loc) == 1 else ""
        return f"{where}: is not a known argument" + (f" (known: {known})" if known else "")
    if kind == "finite_number":
        return f"{where}: must be a finite number, not NaN or Infinity"
    if kind in ("string_type", "string_sub_type"):
        if (
            field == "postal_code"
            and isinstance(value, int | float)
            and not isinstance(value, bool)
        ):
            return f'{where}: must be a JSON string of 5 digits such as "94103", not a number'
        return f"{where}: must be a string"
    if kind in ("float_type", "float_parsing", "int_type", "int_parsing", "int_from_float"):
        noun = "an integer" if kind.startswith("int") else "a number"
        return f"{where}: must be {noun}, got {type(value).__name__}"
    if kind in ("bool_type", "bool_parsing"):
        return f"{where}: must be true or false"
    if kind in ("greater_than_equal", "greater_than"):
        return f"{where}: must be at least {ctx.get('ge', ctx.get('gt'))}, got {value}"
    if kind in ("less_than_equal", "less_than"):
        return f"{where}: must be at most {ctx.get('le', ctx.get('lt'))}, got {value}"
    if kind == "string_too_short":
        return f"{where}: must not be empty"
    if kind == "string_too_long":
        return f"{where}: must be at most {ctx.get('max_length')} characters"
    if kind == "too_long":
        return f"{where}: at most {ctx.get('max_length')} items allowed"
    if kind == "string_pattern_mismatch":
        return f"{where}: {_pattern_hint(field)}"
    if kind == "literal_error":
        return f"{where}: must be {ctx.get('expected')}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{where}: must be a JSON object"
    if kind == "list_type":
        return f"{where}: must be a list"
    if kind == "value_error":
        return f"{where}: {ctx.get('error', error.get('msg', 'invalid'))}"
    return f"{where}: {error.get('msg', 'invalid')}"


def _pattern_hint(field: str) -> str:
    if field == "country":
        return "must be a 2-letter ISO 3166-1 country code such as US"
    if field == "category":
        return "must be a category such as city, airport or postal_code"
    return "has an invalid format"


# Control characters (C0, DEL, C1) and the bidi controls that can make a name display as
# something else (e.g. "gpj.exe" shown as "exe.jpg").
_CONTROL = {*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)}
_BIDI = {0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def ascii_digits(text: str, max_digits: int = 12) -> int | None:
    """`text` as an integer when it is 1 to `max_digits` ASCII digits, else None: int()
    also takes " 2", "+2", "2_0" and "²" (which isdigit() passes), and raises past 4,300
    digits."""
    if not 0 < len(text) <= max_digits or not text.isascii() or not text.isdigit():
        return None
    return int(text)


def has_control_characters(text: str) -> bool:
    return any(ord(char) in _CONTROL for char in text)


def plain_text(value: str) -> str:
    """For names shown to people: no control characters and no bidi controls."""
    if has_control_characters(value):
        raise ValueError("must not contain control characters")
    if any(ord(char) in _BIDI for char in value):
        raise ValueError("must not contain bidirectional control characters")
    return value


def no_control_characters(value: str) -> str:
    if has_control_characters(value):
        raise ValueError("must not contain control characters")
    return value


def _char_class(codes: Iterable[int]) -> str:
    """The inside of a regex character class matching `codes`, as ranges of `\\uXXXX`
    escapes (read alike by Python's re and ECMA-262, the dialect of JSON Schema)."""
    ordered = sorted(codes)
    ranges: list[tuple[int, int]] = []
    for code in ordered:
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return "".join(
        f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}" for low, high in ranges
    )


_NOT_PLAIN = _char_class(_CONTROL | _BIDI)
# What `plain_text` admits, for the OpenAPI schema (its messages stay the validator's).
PLAIN_TEXT_PATTERN = f"^[^{_NOT_PLAIN}]*$"
# The same with at least one character that is not white space (for names stripped first).
VISIBLE_TEXT_PATTERN = f"^[^{_NOT_PLAIN}]*[^\\s{_NOT_PLAIN}][^{_NOT_PLAIN}]*$"


class JsonSchemaPattern:
    """Annotated metadata: documents a string's rule as a JSON Schema `pattern` without
    enforcing it (a validator does, with its own message)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {**handler(core_schema), "pattern": self.pattern}


PlainText = Annotated[str, AfterValidator(plain_text), JsonSchemaPattern(PLAIN_TEXT_PATTERN)]
"""A name shown to people: no control or bidi control characters, documented as a pattern."""
