"""The hosted MCP server: six metered tools over stateless Streamable HTTP.

Built on the SDK's low-level `Server` so the wire shape is ours to state: each tool's
input schema is its strict argument model, its output schema its result
(`app.mcp.tool_schemas`), and every failure is a result with `isError` carrying
`{"error": {"code", "message", ...}}` (`app.mcp.tool_results`). The handlers are thin: the
metered call lives in `app.tool_calls.service`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel
from starlette.types import ASGIApp

from app.geodata.batch import MAX_BATCH_ITEMS
from app.geodata.catalogue import (
    BATCH_FORMS,
    TOOL_SPECS,
    ToolSpec,
    description_for,
    input_schema_for,
    policy,
)
from app.http.errors import product_api_status
from app.kit.clock import iso_ms
from app.kit.config import Settings
from app.kit.errors import AppError, Internal, unavailable_for
from app.kit.principal import CallerPrincipal
from app.mcp import map_app, task_listen
from app.mcp.admission import EdgeAdmission, claim
from app.mcp.auth import BearerAuth, principal_of
from app.mcp.disconnect import ClientGone, ClientGoneWatch, run_unless_client_gone
from app.mcp.task_status import TaskResultStreams
from app.mcp.tasks import (
    MAX_TASK_ITEMS,
    TaskingServer,
    execution_for,
    install,
    task_input_schema,
)
from app.mcp.tool_results import error_result, success_result
from app.mcp.tool_schemas import input_schema, output_schema
from app.mcp.transport_checks import TransportChecks
from app.observability import tracing
from app.observability.logs import bind_request_of
from app.plans import Plan, limits_for
from app.tool_calls.batch import batch_body, call_tool_batch
from app.tool_calls.service import ToolAnswer, call_tool

logger = logging.getLogger(__name__)

SERVER_NAME = "geosvc"
SERVER_VERSION = version("geosvc")
DESCRIPTION = (
    "US ZIP code demographics (population, median household income, ACS profile), "
    "population of states, counties, countries and cities, worldwide geocoding and reverse "
    "geocoding, places near a point and static maps, metered per call."
)
INSTRUCTIONS = (
    "Geospatial and demographic data. get_population: residents of a US ZIP code, state or "
    "county, a country or a city; get_average_income: MEDIAN household income and "
    "get_demographics: an ACS profile (age, households, education, work, housing, race) "
    "of a US ZIP code (states, counties and US places where the deployment has the Census "
    "ACS upstream: each tool's description says what it answers here), the three also "
    "`around` a circle or `within` a bbox or polygon (an estimate: `method` and `warnings` "
    "say how and how far off); geocode: "
    "coordinates of postal codes, cities, regions, countries and airports worldwide "
    "(landmarks and street addresses only with an upstream geocoder); reverse_geocode: "
    "the country, region, US state and county, place and ZIP of a point (offline the ZIP "
    "is an estimate, `postalCodeBasis` says which); search_nearby: cities, airports or "
    "postal codes near a point; static_map: a PNG map. Coordinates (lat, lon, and a "
    "bbox's west, south, east, north) are WGS84 degrees. Figures carry their year and "
    "source (`year` null: the data states none); `warnings` and flags such as "
    "`postalCodeUncertain` say what an answer cannot be sure of. Each successful call "
    "costs 1 credit; failed calls cost nothing. A result's text is a summary line, then "
    "the result as JSON (also its structuredContent); _meta "
    '"geosvc/usage" says what the call cost and the credits used this month. Errors are '
    'results with isError and {"error": {"code", "message", ...}}; QUOTA_EXCEEDED means the '
    "monthly credits of the free plan (or the account's own cap) are used up until `resetsAt`."
)


def instructions(settings: Settings) -> str:
    """INSTRUCTIONS and the plans' rate and concurrency limits, as an agent should pace."""
    free, standard = limits_for(Plan.FREE), limits_for(Plan.STANDARD)
    return (
        f"{INSTRUCTIONS} Calls are limited per API key and per account: the free plan "
        f"{free.rate_per_s:g} calls/s (bursts of {free.burst}), {free.concurrency} at once; "
        f"standard {standard.rate_per_s:g} calls/s (bursts of {standard.burst}), "
        f"{standard.concurrency} at once. Over a limit a call is refused at once with "
        "RATE_LIMITED and `retryAfterSeconds` (wait that long, then retry; it costs nothing). "
        f"A static_map larger than {settings.heavy_map_pixels:,} pixels counts as one call "
        f"per {settings.heavy_map_pixels:,} pixels toward the rate. A list of more than "
        f"{MAX_BATCH_ITEMS} items (up to {MAX_TASK_ITEMS:,}) runs as a task (MCP tasks), "
        "each item with data charged once, at the plan's bulk pace."
    )


def tool_definition(spec: ToolSpec, settings: Settings) -> types.Tool:
    """The tool as listed (`app.mcp.tool_schemas` says what is left out and why)."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=description_for(spec, settings),
        input_schema=task_input_schema(spec.name, input_schema(input_schema_for(spec, settings))),
        output_schema=output_schema(spec.result_model, *batch_result_models(spec.name)),
        execution=execution_for(spec.name),
        annotations=types.ToolAnnotations(
            read_only_hint=spec.read_only,
            # both only mean something for a tool that is not read-only (the spec)
            destructive_hint=None if spec.read_only else False,
            idempotent_hint=None if spec.read_only else spec.idempotent,
            open_world_hint=policy(spec.name, settings) != "embedded",
        ),
        meta=map_app.tool_meta(spec.name),
    )


async def handle_call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name not in TOOL_SPECS:  # a protocol error, as the MCP specification says
        raise MCPError(
            types.INVALID_PARAMS, f"Unknown tool {params.name!r}; tools: {', '.join(TOOL_SPECS)}"
        )
    principal = principal_of(ctx.request)
    bind_request_of(ctx.request)  # the session manager's task is not the request's
    try:
        form = BATCH_FORMS.get(params.name)
        if form is not None and form.is_called(params.arguments):
            return await _call_batch(ctx, principal, params.name, params.arguments or {})
        admitted = claim(ctx.request, params.name)
        answer = await run_unless_client_gone(
            ctx.request,
            lambda: call_tool(principal, params.name, params.arguments, admitted, link_images=True),
        )
    except ClientGone:  # nobody to answer; the call was cancelled and its credit released
        logger.warning("tool call %s abandoned: the client disconnected", params.name)
        return error_result(Internal("The client disconnected; no credit was charged."))
    except AppError as exc:
        return error_result(exc)
    except Exception as exc:  # e.g. Redis unreachable: the cap fails closed, with a result
        unavailable = unavailable_for(exc)
        if unavailable is not None:
            logger.warning("tool call %s: a backing service is down: %s", params.name, exc)
            return error_result(unavailable)
        logger.exception("tool call %s failed", params.name)
        return error_result(Internal("The service could not run this call; no credit was charged."))
    return success_result(
        params.name,
        answer.structured,
        answer.reading,
        image=_image(answer),
        meta=map_app.result_meta(params.name, principal.user_id, answer.app_meta),
    )


def _image(answer: ToolAnswer) -> types.ImageContent | types.ResourceLink | None:
    """The image inline, or a link to it when it is too big to carry (`images`)."""
    link = answer.image_link
    if link is not None:
        expires = iso_ms(datetime.fromtimestamp(link.expires_at, UTC))
        return types.ResourceLink(
            type="resource_link",
            uri=link.url,
            name="map.png",
            mime_type="image/png",
            size=link.size,
            description=f"The map image (PNG, {link.size:,} bytes), too big to carry inline; "
            f"the link works until {expires}.",
        )
    if answer.png_base64 is None:
        return None
    return types.ImageContent(type="image", data=answer.png_base64, mime_type="image/png")


def batch_result_models(name: str) -> list[type[BaseModel]]:
    form = BATCH_FORMS.get(name)
    return [form.result_model] if form else []


async def _call_batch(
    ctx: ServerRequestContext[Any],
    principal: CallerPrincipal,
    name: str,
    arguments: dict[str, Any],
) -> types.CallToolResult:
    """A tool given a list (`geocode` with `queries`, `get_population` with
    `postal_codes`, ...): answered one to one."""
    items = BATCH_FORMS[name].items(arguments)
    answer = await run_unless_client_gone(
        ctx.request, lambda: call_tool_batch(principal, name, items)
    )
    return success_result(name, batch_body(answer, product_api_status), answer.reading)


def build_server(settings: Settings) -> Server[Any]:
    # Built once: the modern transport looks input schemas up on every call.
    listing = types.ListToolsResult(
        tools=[tool_definition(spec, settings) for spec in TOOL_SPECS.values()]
    )
    input_schemas = {tool.name: tool.input_schema for tool in listing.tools}

    async def list_resources(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[map_app.resource()])

    async def read_resource(
        _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri != map_app.MAP_URI:
            raise MCPError(
                types.INVALID_PARAMS, f"No resource {params.uri!r}; resources: {map_app.MAP_URI}"
            )
        return map_app.read(settings)

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    server = TaskingServer(
        SERVER_NAME,
        version=SERVER_VERSION,
        title="Geospatial Data Service",
        description=DESCRIPTION,
        website_url=settings.base_url,
        icons=[
            types.Icon(
                src=f"{settings.base_url.rstrip('/')}/dashboard/static/favicon.svg",
                mime_type="image/svg+xml",
                sizes=["any"],
            )
        ],
        instructions=instructions(settings),
        get_tool_input_schema=input_schemas.get,
        on_list_tools=list_tools,
        on_call_tool=handle_call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    if not tracing.enabled():
        server.middleware = [each for each in server.middleware if not _is_sdk_span(each)]
    install(server)
    server.add_request_handler(
        "subscriptions/listen", types.SubscriptionsListenRequestParams, task_listen.listen
    )
    server.extensions.update(map_app.extension_settings())  # the MCP App (app.mcp.map_app)
    return server


def _is_sdk_span(middleware: object) -> bool:
    """The SDK's OpenTelemetry span around every request (its documented opt-out: drop it
    from `server.middleware`). With tracing off it records nothing yet costs about 0.05 ms
    of the api's CPU a call; with tracing on it stays, and MCP requests have their spans."""
    return type(middleware).__name__ == "OpenTelemetryMiddleware"


def transport_checks(app: ASGIApp, settings: Settings) -> TransportChecks:
    """Allowed hosts and origins from Settings, plus the service's own public address."""
    public = urlsplit(settings.base_url)
    return TransportChecks(
        app,
        allowed_hosts=[*settings.allowed_hosts, public.netloc],
        allowed_origins=[*settings.allowed_origins, f"{public.scheme}://{public.netloc}"],
    )


class McpTransports:
    """The transports over one server, run together in the app lifespan."""

    def __init__(self, *managers: StreamableHTTPSessionManager) -> None:
        self.managers = managers

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for manager in self.managers:
                await stack.enter_async_context(manager.run())
            yield


def mcp_transport(settings: Settings) -> tuple[McpTransports, ASGIApp]:
    """The session managers (run them in the app lifespan) and the checked, authenticated
    ASGI app.

    Stateless with JSON responses: any api replica can answer any request. A 2025-11-25
    `tasks/result` from a client that takes SSE is answered by an SSE transport over the
    same server, to carry `notifications/tasks/status` (`app.mcp.task_status`).
    """
    server = build_server(settings)
    # Host and Origin are checked in front (TransportChecks), case-insensitively
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    answered = StreamableHTTPSessionManager(
        app=server, json_response=True, stateless=True, security_settings=security
    )
    streamed = StreamableHTTPSessionManager(
        app=server, json_response=False, stateless=True, security_settings=security
    )
    transport = ClientGoneWatch(
        TaskResultStreams(StreamableHTTPASGIApp(answered), StreamableHTTPASGIApp(streamed))
    )
    transports = McpTransports(answered, streamed)
    return transports, transport_checks(BearerAuth(EdgeAdmission(transport)), settings)
