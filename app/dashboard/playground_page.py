"""The playground: try each tool from the dashboard with one of your keys, see the answer
as a model sees it (the MCP text block) and as JSON (a map's image too), and the same
call as curl, Python, an MCP configuration and the /v1 URL.

The run is made here, on the server, for the signed-in account and the key it picks by
id (`averify_own_key`): the page never has a key's secret (only its hash is stored), and
a form on another site cannot run it (the session cookie is SameSite=Lax and state-
changing requests from another origin are refused, `app.http.security`). It is the
metered call every surface makes (`call_tool`): the key's rate limits apply, a live
key's call that returns data costs a credit, a test key's counts on the test counter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.api_keys import service as api_keys
from app.api_keys.verify import averify_own_key
from app.dashboard.playground_form import (
    FIELD_PREFIX,
    FormField,
    arguments_of,
    form_fields,
    form_values,
)
from app.dashboard.playground_snippets import KEY_ENV_VAR, snippets
from app.dashboard.rendering import render
from app.deps.users import SignedInUser
from app.geodata.catalogue import TOOL_SPECS
from app.geodata.results import ImageResult
from app.geodata.tools.spec import ToolSpec
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import AppError
from app.mcp.server import tool_definition
from app.mcp.tool_results import compact_json, text_block
from app.models import User
from app.request_log.service import PLAYGROUND_SURFACE
from app.tool_calls.service import call_tool

router = APIRouter(include_in_schema=False)

PATH = "/dashboard/playground"


@dataclass(frozen=True)
class KeyChoice:
    key_id: str
    label: str
    env: str


@dataclass(frozen=True)
class RunResult:
    ok: bool
    text: str  # the MCP text block: what a model that reads only `content` sees
    json: str  # structuredContent, indented
    image: str | None  # a data: URL of the map
    charged: int
    env: str


def _spec(tool: str) -> ToolSpec:
    spec = TOOL_SPECS.get(tool)
    if spec is None:
        raise StarletteHTTPException(404)
    return spec


def _fields(spec: ToolSpec) -> list[FormField]:
    schema = tool_definition(spec, get_settings()).input_schema
    lists = tuple(b.argument for b in spec.batch.lists) if spec.batch else ()
    return form_fields(schema, leave_out=lists)


def _is_image(spec: ToolSpec) -> bool:
    return issubclass(spec.result_model, ImageResult)


def _key_choices(user_id: str) -> list[KeyChoice]:
    """The account's active keys, test keys first (the default: a run costs no credit)."""
    with new_session() as session:
        keys = api_keys.list_keys(session, user_id)
    ordered = sorted(keys, key=lambda key: key.env != "test")  # stable: newest first within
    return [KeyChoice(k.key_id, f"{k.name} ({k.env}, {k.key_id})", k.env) for k in ordered]


def _example(spec: ToolSpec) -> dict[str, Any]:
    return dict(spec.example.mcp_arguments or spec.example.arguments)


def _page(
    request: Request,
    user: User,
    spec: ToolSpec,
    keys: list[KeyChoice],
    *,
    values: dict[str, str],
    arguments: dict[str, Any],
    key_id: str | None = None,
    result: RunResult | None = None,
) -> Response:
    chosen = key_id if any(k.key_id == key_id for k in keys) else (keys[0].key_id if keys else "")
    return render(
        request,
        "playground.html",
        user=user,
        tools=[(s.name, s.title) for s in TOOL_SPECS.values()],
        spec=spec,
        fields=_fields(spec),
        values=values,
        keys=keys,
        chosen=chosen,
        result=result,
        snippets=snippets(spec, arguments, image=_is_image(spec)),
        key_env_var=KEY_ENV_VAR,
        field_prefix=FIELD_PREFIX,
    )


@router.get(PATH)
async def playground_start(request: Request, user: SignedInUser) -> Response:
    return await playground(next(iter(TOOL_SPECS)), request, user)


@router.get(PATH + "/{tool}")
async def playground(tool: str, request: Request, user: SignedInUser) -> Response:
    spec = _spec(tool)
    keys = await anyio.to_thread.run_sync(_key_choices, user.id)
    example = _example(spec)
    values = form_values(_fields(spec), example)
    return _page(request, user, spec, keys, values=values, arguments=example)


@router.post(PATH + "/{tool}")
async def run(tool: str, request: Request, user: SignedInUser) -> Response:
    """Runs the call with the chosen key and shows its answer (an error in the envelope a
    client would get, which costs nothing)."""
    spec = _spec(tool)
    form = await request.form()
    fields = _fields(spec)
    submitted = {f.name: str(form.get(f.input_name, "")) for f in fields}
    key_id = str(form.get("key_id", ""))
    keys = await anyio.to_thread.run_sync(_key_choices, user.id)
    env = next((k.env for k in keys if k.key_id == key_id), "live")
    arguments: dict[str, Any] = {}
    try:
        arguments = arguments_of(fields, submitted)
        principal = await averify_own_key(user.id, key_id)
        principal = replace(principal, surface=PLAYGROUND_SURFACE)
        answer = await call_tool(principal, spec.name, arguments)
    except AppError as exc:
        body = exc.to_body()
        result = RunResult(False, compact_json(body), json.dumps(body, indent=2), None, 0, env)
    else:
        structured = answer.structured
        result = RunResult(
            True,
            text_block(spec.name, structured),
            json.dumps(structured, indent=2, ensure_ascii=False),
            "data:image/png;base64," + answer.png_base64 if answer.png_base64 else None,
            answer.reading.charged if answer.reading else 1,
            env,
        )
    return _page(
        request,
        user,
        spec,
        keys,
        values=submitted,
        arguments=arguments,
        key_id=key_id,
        result=result,
    )
