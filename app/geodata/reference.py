"""docs/TOOLS.md, written from the tool catalogue: the same specs that give the MCP server
its schemas and the workers their dispatch, so the reference cannot drift from them.

`geosvc data reference` writes it; a test checks the committed file is current.
"""

from __future__ import annotations

from typing import Any

from app.geodata.batch import MAX_BATCH_ITEMS, BatchForm, BatchItem
from app.geodata.catalogue import BATCH_FORMS, TOOL_SPECS, ToolSpec
from app.geodata.tools.static_map import outlines
from app.kit.config import Settings

ERRORS = (
    ("INVALID_ARGUMENT", "an argument is missing, unknown, of the wrong type or out of range; "
     "the message names it"),
    ("NOT_FOUND", "nothing there: no such ZIP code, no place matches, nothing in range"),
    ("UNSUPPORTED", "this deployment cannot answer it at all (a search_nearby category that "
     "needs the upstream place search, a landmark or street address for geocode offline); "
     "the message says what it covers"),
    ("FORBIDDEN", "the account's e-mail address is not confirmed yet (`reason`: "
     "`email_unverified`); follow the link sent at sign-up"),
    ("QUOTA_EXCEEDED", "the free plan's monthly credits, or the account's own cap, are used up "
     "until `resetsAt`"),
    ("RATE_LIMITED", "over the key's or account's rate or concurrency: wait "
     "`retryAfterSeconds`"),
    ("UPSTREAM_UNAVAILABLE", "the upstream provider failed or its breaker is open; retryable"),
    ("UNAVAILABLE", "Redis, the database or the broker is down for a moment; retryable"),
    ("DEADLINE_EXCEEDED", "no worker answered within the tool deadline (20 s)"),
    ("INTERNAL", "a fault of ours"),
)  # fmt: skip


def tool_reference() -> str:
    """The reference in Markdown, from the catalogue and the settings' defaults (not from
    this process's environment: the file describes the product, not one deployment)."""
    defaults = Settings.model_fields
    free_quota = defaults["free_quota"].default
    standard_quota = defaults["standard_quota"].default
    lines = [
        "# Tool reference",
        "",
        "Written by `geosvc data reference` from the tool catalogue "
        "(`app/geodata/catalogue.py`): the schemas the MCP server lists are these.",
        "",
        f"Every call that returns data costs **1 credit**; an error costs nothing. The free "
        f"plan has {free_quota:,} credits a month (then `QUOTA_EXCEEDED`), the standard plan "
        f"{standard_quota:,} and then overage. Arguments are JSON; a result is "
        "`structuredContent` (camelCase) and, for hosts that show their model only the text, "
        "the same object as compact JSON in the text block after a one-line summary "
        "(docs/TOOLS.md's last part, \"What a host's model sees\", shows both); "
        "`source` is the credit to show with the data and `dataset` the id of the data "
        "release that answered (see docs/DATA.md); `static_map` adds a PNG image block, or, "
        "for an image larger than `GEOSVC_MAP_INLINE_MAX_BYTES` as base64 (700,000 by "
        "default), a `resource_link` to the PNG at a signed URL that works for "
        "`GEOSVC_MAP_LINK_TTL_S` (15 minutes) without a key, or with the account's key "
        "(`Authorization: Bearer`); fetching it costs no credit, and a link may be fetched "
        "30 times by default (`GEOSVC_MAP_LINK_FETCHES_PER_LINK`; then 429 `RATE_LIMITED`). "
        "Which provider answers each tool is a deployment setting "
        "(`GEOSVC_TOOL_PROVIDERS`): offline, the embedded datasets; the upstream providers "
        "where enabled. The same tools answer over plain HTTP at `/v1` (the README's "
        '"HTTP API", `/v1/openapi.json`), with the same results, limits and credits.',
        "",
        "## Credits in every answer",
        "",
        "Every result's `_meta` has `geosvc/usage`: what the call cost and where the month "
        "stands, e.g. "
        '`{"charged": 1, "used": 42, "quota": 1000, "period": "2026-11", "state": "ok", '
        '"resetsAt": "2026-12-01T00:00:00.000Z"}`. `charged` is 0 for an error or a '
        "refusal (a batch: 1 per item with data). `used` counts the period's credits, this "
        "call's included: the count admission read plus this call's charge (the answer does "
        "not wait for Redis to confirm the commit), exact for calls made one at a time; with "
        "calls of the account running at once, an answer does not count those that finished "
        "while it ran (the next one does); credits an operator granted this month are not "
        "taken off it. `state` is `ok` below 80 % of `quota` (or of the account's own cap "
        "when lower, credits granted this month added), `warning` up to 100 %, `over` past "
        "it (standard plan); `resetsAt` is when the month's credits "
        "come back. A call refused before it reached the meter (invalid arguments, an outage) "
        'has only `{"charged": 0}`. Over HTTP the same are headers: `Credits-Charged`, '
        "`Credits-Used` (the commit's count), `Credits-Quota`, `Credits-Period`, "
        "`Credits-State`, `Credits-Reset`.",
        "",
        "## The interactive map (an MCP App)",
        "",
        "`static_map`, `geocode`, `reverse_geocode` and `search_nearby` carry "
        "`_meta.ui.resourceUri` = `ui://geosvc/map.html` in tools/list: hosts that render MCP "
        "Apps (the `io.modelcontextprotocol/ui` extension) show that resource "
        "(`text/html;profile=mcp-app`) in a sandboxed iframe: a pannable, zoomable map "
        "(Leaflet, inlined) of the call's view, markers, labels and path, on the service's own "
        'tiles (`/v1/tiles`, docs/HTTP_API.md). Each such result\'s `_meta["geosvc/tiles"]` '
        "holds the signed tile URL template the page uses (`urlTemplate`, `expiresAt`, "
        "`maxZoom`, `attribution`): no key in the iframe; the tiles are free. Hosts without "
        "Apps show the PNG and the text as before.",
        "",
        "A `static_map` with a `choropleth` is drawn in the app too: the areas of the image's "
        "view filled with the legend's colours (the same classes), those without a figure "
        'hatched ("no data"), and a hover (a tap on touch screens) shows an area\'s name, '
        "its figure with the unit, the source and year. The outlines come in the result's "
        '`_meta["geosvc/choropleth"]`, never in `content` or `structuredContent` (hosts do '
        "not hand `_meta` to the model, so it reads no coordinates), column by column: "
        "`names`, `values` (null: no data), `classes` (an index into the legend's classes; "
        "null: no data), and `rings` (per area, each ring in Google's encoded polyline text "
        "of whole pixels at `zoom`, the view's zoom + 1, x first: first point then deltas) or, "
        "for ZIP codes, `points`; with `measure`, `unit`, `source`, `year`, `credit` and "
        "`bytes`. Each ring is simplified to half a pixel of the view and only rings reaching "
        "the view are sent (sizes per level: bench/choropleth.py). Over "
        f"{outlines.MAX_BYTES // 1000} KB a coarser pass is tried; over it "
        "still, the payload has `omitted` (why) instead, and the app says so beside the "
        "legend, which stays the image's.",
        "",
        "Why `_meta` and not a signed URL the app fetches: the outlines are built where the "
        "image is drawn (the worker has the areas loaded and the classes at hand), they "
        "arrive with the result the host already hands the iframe, need no CSP "
        "`connectDomains`, no further request, no key and no link that expires, and cost no "
        "credit. The price: the result grows by the payload (capped), and a `/v1` call "
        "builds it too and drops it.",
        "",
        "## Errors",
        "",
        "An error is a result with `isError: true` and "
        '`{"error": {"code", "message", ...}}` as its text (JSON) and `structuredContent`; '
        "refusals add `retryable`, `retryAfterSeconds`, and for quotas `quota`, `used`, "
        "`period`, `resetsAt`. The tools' output schemas describe the answers and admit the "
        'envelope with one branch, `{"required": ["error"]}`: the official clients (Python '
        "SDK 2.x, TypeScript SDK 2.x in the MCP Inspector and mcp-remote) do not validate "
        "error results, older TypeScript clients (1.x) do. An unknown tool is the JSON-RPC "
        "error -32602.",
        "",
        "| code | when |",
        "|---|---|",
        *(f"| `{code}` | {when} |" for code, when in ERRORS),
        "",
    ]
    for spec in TOOL_SPECS.values():
        lines += _tool_section(spec)
    return "\n".join(lines).rstrip() + "\n"


def _tool_section(spec: ToolSpec) -> list[str]:
    offline, upstream = spec.coverage
    description = spec.description.replace("{categories} ", "").replace("{coverage}", "")
    arguments = spec.args_model.model_json_schema()
    result = spec.result_model.model_json_schema(by_alias=True, mode="serialization")
    required = set(arguments.get("required", []))
    lines = [
        f"## `{spec.name}`: {spec.title}",
        "",
        description,
        "",
        f"- **Offline:** {offline}.",
        f"- **Upstream:** {upstream}.",
        *_batch_lines(spec),
        "",
        "| argument | type | | description |",
        "|---|---|---|---|",
    ]
    for path, prop in _fields(arguments, arguments.get("$defs", {}), ""):
        if "." in path:
            needed = ""
        elif path in required:
            needed = "required"
        else:
            needed = f"default `{_json(prop['default'])}`" if "default" in prop else "optional"
        kind = _type(prop, arguments) + _bounds(prop)
        lines.append(f"| `{path}` | {kind} | {needed} | {prop.get('description', '')} |")
    lines += ["", "| result field | type | description |", "|---|---|---|"]
    for path, prop in _fields(result, result.get("$defs", {}), ""):
        lines.append(f"| `{path}` | {_type(prop, result)} | {prop.get('description', '')} |")
    return [*lines, ""]


def _batch_lines(spec: ToolSpec) -> list[str]:
    form = BATCH_FORMS.get(spec.name)
    if form is None:
        return []
    fields = ", ".join(f"`{name}`" for name in ("result", *BatchItem.model_fields))
    listed = set(spec.args_model.model_json_schema()["properties"])
    return [
        f"- **Batch** of up to {MAX_BATCH_ITEMS}: over MCP {_lists(form, listed)}; over HTTP "
        f'`POST {spec.http_path}/batch` with `{{"items": [<arguments>, ...]}}`. '
        f"`results[i]` answers item i ({fields}); the batch adds `credits`, 1 per item with "
        "data. Each item is validated, priced and limited like the call alone (an invalid "
        "item: INVALID_ARGUMENT in its place).",
    ]


def _lists(form: BatchForm, listed: set[str]) -> str:
    """What each list argument replaces, and which of the arguments the tool lists its
    items share (`country` of get_population is accepted, not listed)."""
    lists = " or ".join(
        f"`{batch.argument}` instead of {'/'.join(f'`{n}`' for n in batch.replaces)}"
        for batch in form.lists
    )
    shared = ", ".join(f"`{name}`" for name in form.shared if name in listed)
    return lists + (f" ({shared} shared by every item)" if shared else "")


def _fields(schema: dict[str, Any], defs: dict[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """Every property, nested ones as `parent.child` (`[]` for list items)."""
    found = []
    for name, prop in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        found.append((path, prop))
        for ref, suffix in ((_ref(prop), "."), (_ref(prop.get("items", {})), "[].")):
            if ref:
                found += _fields(defs[ref], defs, path + suffix)
    return found


def _ref(prop: dict[str, Any]) -> str | None:
    ref = prop.get("$ref") or next(
        (option["$ref"] for option in prop.get("anyOf", []) if "$ref" in option), None
    )
    return str(ref).rsplit("/", 1)[1] if ref else None


def _type(prop: dict[str, Any], schema: dict[str, Any]) -> str:
    if "enum" in prop:
        return " \\| ".join(f"`{_json(value)}`" for value in prop["enum"])
    if "const" in prop:
        return f"`{_json(prop['const'])}`"
    if _ref(prop):
        return "object"
    if "anyOf" in prop:
        return " or ".join(_type(option, schema) for option in prop["anyOf"])
    if prop.get("type") == "array":
        return f"list of {_type(prop.get('items', {}), schema)}"
    if isinstance(prop.get("type"), list):  # {"type": ["number", "null"]}
        return " or ".join(str(name) for name in prop["type"])
    return str(prop.get("type", "any"))


# JSON Schema's bounds, as the argument tables say them: (minimum keyword, maximum, unit)
_BOUNDS = (
    ("minimum", "maximum", ""),
    ("exclusiveMinimum", "exclusiveMaximum", ""),
    ("minLength", "maxLength", " characters"),
    ("minItems", "maxItems", " items"),
)


def _bounds(prop: dict[str, Any]) -> str:
    """The limits tools/list enforces on an argument, e.g. ", 1 to 10"."""
    said = []
    for option in prop.get("anyOf", [prop]):
        for low_key, high_key, unit in _BOUNDS:
            low, high = option.get(low_key), option.get(high_key)
            strict = "exclusive" in low_key
            if low is not None and high is not None:
                between = "between" if strict else "from"
                said.append(f"{between} {_num(low)} to {_num(high)}{unit}")
            elif high is not None:
                said.append(f"{'under' if strict else 'at most'} {_num(high)}{unit}")
            elif low is not None:
                said.append(f"{'over' if strict else 'at least'} {_num(low)}{unit}")
    return "".join(f", {text}" for text in dict.fromkeys(said))


def _num(value: float) -> str:
    return f"{value:,}" if float(value) != int(value) else f"{int(value):,}"


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
