"""The tools' schemas as `tools/list` carries them: every character is context an agent's
host pays for before the first question, so each thing is said once.

- A tool's result is written once, as the first branch of the output schema; its batch's
  items refer to it (`#/anyOf/0`). A definition used once is written where it is used.
- A batch's branch is its shape only (`results[].status`, `.result` or `.error`,
  `credits`): the tool's description says what it means, in one sentence, and an item's
  result or error is absent, never null. Only the top says `"type": "object"`: below it,
  `properties` says it.
- Errors are not described in each output schema (a batch item's `error` is an object).
  The official clients (the Python SDK 2.x `ClientSession.call_tool`, the TypeScript
  SDK 2.x `Client.callTool`, which the MCP Inspector and mcp-remote bundle) validate only
  results without `isError`; older TypeScript clients (1.x before typescript-sdk#1945)
  validate an error's `structuredContent` too. One tiny branch, `{"required":
  ["error"]}`, admits the error envelope for those; its fields are documented once, in
  docs/TOOLS.md and the server's instructions.
- No schema noise: no `title` (pydantic's titles repeat the property name), no
  `"default": null` (an absent optional is null); output schemas describe what the
  server sends, so they have no defaults (a result carries every field) and none of the
  arguments' bounds (`minimum`, `additionalProperties`, ...).
- A `$defs` entry that another one subsumes (geocode's candidates are matches with fewer
  fields) is written once: the other's schema admits everything the server sends there.
- `T | None` is written `{"type": [T, "null"]}` where that says the same (one keyword
  instead of an anyOf of two branches: cheaper to read and to validate).
- No description that the property's name already says (`SAID_BY_THE_NAME`: `lat` is a
  latitude; coordinates are WGS84 degrees throughout, the server's instructions say it
  once), and none, nor a `type`, beside a `const`: its value says both.
- Each tool's definition fits its budget (tests/mcp/test_tool_budget.py).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from app.geodata.batch import ItemError

# Admits `{"error": {...}}`: for clients that validate error results against the schema.
ERROR_BRANCH: dict[str, Any] = {"required": ["error"]}


# A property's description that only says what its name does, in every tool.
SAID_BY_THE_NAME: dict[str, str] = {
    "name": "The place's name",
    "lat": "Latitude",
    "lon": "Longitude",
    **{edge: "Degrees" for edge in ("west", "south", "east", "north")},
}


def input_schema(arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's arguments schema as listed."""
    schema = nullable_as_type_list(single_use_defs_inlined(compact(arguments)))
    if schema.get("required") == []:
        del schema["required"]
    return described_once(schema)


def output_schema(*models: type[BaseModel]) -> dict[str, Any]:
    """The schema of `models` (a call's result, then its batch's), each written once in
    `$defs`, or the error envelope."""
    defs: dict[str, Any] = {}
    branches: list[dict[str, Any]] = []
    for index, model in enumerate(models):
        schema = model.model_json_schema(by_alias=True, mode="serialization")
        if index == 0:  # the call's result: batches refer to it too
            defs.update(schema.pop("$defs", {}))
            defs[model.__name__] = schema
            branches.append({"$ref": f"#/$defs/{model.__name__}"})
        else:
            branches.append(_batch_branch(schema))
    combined = {"type": "object", "anyOf": [*branches, ERROR_BRANCH], "$defs": defs}
    combined = compact(combined, output=True)
    merged = subsumed_defs_merged(combined)
    inlined = first_branch_inlined(single_use_defs_inlined(merged))
    return described_once(nullable_as_type_list(_object_type_implied(inlined)))


def _object_type_implied(schema: dict[str, Any]) -> dict[str, Any]:
    """Below the top, no `"type": "object"` beside `properties`: an output schema
    describes what the server sends, and `properties` says what each object holds."""

    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(item) for item in node]
        if not isinstance(node, dict):
            return node
        implied = node.get("type") == "object" and "properties" in node
        return {k: strip(v) for k, v in node.items() if not (implied and k == "type")}

    return {key: strip(value) for key, value in schema.items()}


def first_branch_inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The call's result written as the first branch, where a batch's items refer to it
    (`#/anyOf/0`, a JSON pointer like any `$ref`), and no branch saying `"type":
    "object"` again: the schema says it once, at the top."""
    branches: list[dict[str, Any]] = schema["anyOf"]
    ref = branches[0].get("$ref")
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
    if name in defs:
        first = defs.pop(name)
        text = json.dumps({**schema, "anyOf": branches[1:], "$defs": defs})
        rest: dict[str, Any] = json.loads(text.replace(f'"{ref}"', '"#/anyOf/0"'))
        schema = {**rest, "anyOf": [first, *rest["anyOf"]]}
        if not defs:
            del schema["$defs"]
    schema["anyOf"] = [
        {key: value for key, value in branch.items() if (key, value) != ("type", "object")}
        for branch in schema["anyOf"]
    ]
    return schema


def single_use_defs_inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$defs` entry referred to once written where it is referred to
    (a description beside the `$ref` is the one kept)."""
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    text = json.dumps(schema)
    inlined = {
        name
        for name, definition in defs.items()
        if text.count(f'"#/$defs/{name}"') == 1
        and f'"#/$defs/{name}"' not in json.dumps(definition)  # not recursive
    }

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
        beside = {key: value for key, value in node.items() if key != "$ref"}
        if name in inlined and set(beside) <= {"description"}:
            return {**inline(defs[name]), **beside}
        return {key: inline(value) for key, value in node.items() if key != "$defs"}

    result: dict[str, Any] = inline(schema)
    kept = {name: inline(value) for name, value in defs.items() if name not in inlined}
    if kept:
        result["$defs"] = kept
    return result


def _batch_branch(schema: dict[str, Any]) -> dict[str, Any]:
    """A batch's branch as the server sends it, said once: an item's `result` or `error`
    is absent, never null, and the error a plain object (its fields are the error
    envelope's); the batch's fields are not described here, the tool's description says
    what `results[i]` and `credits` are (its batch sentence)."""

    def terse(node: Any) -> Any:
        if isinstance(node, list):
            return [terse(item) for item in node]
        if not isinstance(node, dict):
            return node
        branches = node.get("anyOf")
        if isinstance(branches, list) and {"type": "null"} in branches and len(branches) == 2:
            (node,) = [branch for branch in branches if branch != {"type": "null"}]
        if node == {"$ref": f"#/$defs/{ItemError.__name__}"}:
            return {"type": "object"}
        return {key: terse(value) for key, value in node.items() if key != "description"}

    defs = schema.get("$defs", {})
    inlined = json.loads(json.dumps(schema).replace('"#/$defs/', '"#/$defs/').replace("\u0000", ""))
    items_ref = inlined["properties"]["results"]["items"].get("$ref", "")
    item_name = items_ref.removeprefix("#/$defs/")
    if item_name in defs:  # the batch's item: written where it is used
        inlined["properties"]["results"]["items"] = defs[item_name]
    return {key: value for key, value in terse(inlined).items() if key != "$defs"}


def subsumed_defs_merged(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$defs` entry D that another entry E subsumes replaced by E: every
    property of D is E's with the same type, and E requires nothing D does not. The
    server's instances of D are then instances of E (neither forbids other properties)."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def shape(prop: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in prop.items() if key != "description"}

    def subsumes(wide: dict[str, Any], narrow: dict[str, Any]) -> bool:
        wide_props, narrow_props = wide.get("properties", {}), narrow.get("properties", {})
        return bool(narrow_props) and (
            set(wide.get("required", [])) <= set(narrow.get("required", []))
            and all(
                name in wide_props and shape(wide_props[name]) == shape(prop)
                for name, prop in narrow_props.items()
            )
        )

    replaced: dict[str, str] = {}
    for narrow_name, narrow in defs.items():
        if narrow_name in replaced.values():  # another's replacement stays
            continue
        for wide_name, wide in defs.items():
            if wide_name != narrow_name and wide_name not in replaced and subsumes(wide, narrow):
                replaced[narrow_name] = wide_name
                break
    if not replaced:
        return schema
    text = json.dumps({**schema, "$defs": {k: v for k, v in defs.items() if k not in replaced}})
    for narrow_name, wide_name in replaced.items():
        text = text.replace(f'"#/$defs/{narrow_name}"', f'"#/$defs/{wide_name}"')
    merged: dict[str, Any] = json.loads(text)
    return merged


def described_once(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with a property's description left out where a property of the same name
    already had the same one (geocode's `candidates[].lat` after `results[].lat`). Read in
    the order an agent meets them: from the call's result, into each `$ref` on the way."""
    defs: dict[str, Any] = schema.get("$defs", {})
    seen: set[tuple[str, str]] = set()
    walked: set[str] = set()
    visited: set[int] = set()  # each node once: the anyOf is met first, then in the schema

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        if not isinstance(node, dict) or id(node) in visited:
            return
        visited.add(id(node))
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref not in walked:
            walked.add(ref)
            walk(defs.get(ref.removeprefix("#/$defs/")))
        for name, prop in (node.get("properties") or {}).items():
            description = prop.get("description")
            if description is not None and (name, description) in seen:
                del prop["description"]
            elif description is not None:
                seen.add((name, description))
            walk(prop)
        for key, value in node.items():
            if key not in ("properties", "description", "$defs"):
                walk(value)

    walk(schema.get("anyOf"))
    walk(schema)
    return schema


# What an output schema leaves out: the server's answers are within them by construction.
_ARGUMENT_KEYWORDS = frozenset(
    {"default", "minimum", "maximum", "minLength", "maxLength", "pattern", "additionalProperties"}
)


def _unless_said_by(name: str, prop: Any) -> Any:
    """The property without a description its name already says."""
    if isinstance(prop, dict) and prop.get("description") == SAID_BY_THE_NAME.get(name):
        return {key: value for key, value in prop.items() if key != "description"}
    return prop


def compact(schema: Any, *, output: bool = False) -> Any:
    """`schema` without titles, null defaults, descriptions its property names say
    (`SAID_BY_THE_NAME`) and what a `const` says, and as an `output` schema without
    `_ARGUMENT_KEYWORDS`. Property names are kept whatever they are called."""
    if isinstance(schema, list):
        return [compact(item, output=output) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if "const" in schema and key in ("type", "description"):
            continue
        if key == "default" and value is None:
            continue
        if output and key in _ARGUMENT_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            kept[key] = {
                name: compact(_unless_said_by(name, sub), output=output)
                for name, sub in value.items()
            }
        elif key == "$defs" and isinstance(value, dict):
            kept[key] = {name: compact(sub, output=output) for name, sub in value.items()}
        else:
            kept[key] = compact(value, output=output)
    return kept


# Keywords that say nothing about a null (JSON Schema applies each to one type only), so a
# schema made only of these admits null once "null" is among its types.
_NULL_BLIND_KEYWORDS = frozenset(
    {
        "type", "title", "description", "examples", "default", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern", "items", "minItems", "maxItems",
    }
)  # fmt: skip


def nullable_as_type_list(schema: Any) -> Any:
    """`schema` with each `{"anyOf": [{"type": T, ...}, {"type": "null"}]}` (pydantic's
    `T | None`) written `{"type": [T, "null"], ...}`: the same instances, in one keyword.
    Clients validate every result against the output schema, and a validator builds an
    error for the first branch of each null it meets in an anyOf: the type list is about
    a third cheaper for them."""
    if isinstance(schema, list):
        return [nullable_as_type_list(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    rewritten = {key: nullable_as_type_list(value) for key, value in schema.items()}
    branches = rewritten.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        (other,) = [branch for branch in branches if branch != {"type": "null"}]
        if (
            isinstance(other, dict)
            and isinstance(other.get("type"), str)
            and set(other) <= _NULL_BLIND_KEYWORDS
            and not set(other) & (set(rewritten) - {"anyOf", "description"})
        ):
            del rewritten["anyOf"]  # the field's own description wins over its type's
            rewritten = {**other, **rewritten, "type": [other["type"], "null"]}
    return rewritten
