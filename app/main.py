"""The FastAPI application: control plane, dashboard, /mcp, health."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route

from app.api_keys.endpoints import router as api_keys_router
from app.billing.endpoints import router as billing_router
from app.dashboard.account_pages import router as dashboard_account_router
from app.dashboard.apps_page import router as dashboard_apps_router
from app.dashboard.assets import router as dashboard_assets_router
from app.dashboard.auth_pages import router as dashboard_auth_router
from app.dashboard.calls_page import router as dashboard_calls_router
from app.dashboard.consent_page import router as dashboard_consent_router
from app.dashboard.handlers import install_page_handlers
from app.dashboard.job_page import router as dashboard_job_router
from app.dashboard.jobs_page import router as dashboard_jobs_router
from app.dashboard.keys_page import router as dashboard_keys_router
from app.dashboard.pages import router as dashboard_router
from app.dashboard.playground_page import router as dashboard_playground_router
from app.dashboard.recovery_pages import router as dashboard_recovery_router
from app.dashboard.usage_page import router as dashboard_usage_router
from app.geodata import service as geodata
from app.geodata.indices.version import INDEX_VERSION
from app.http.errors import install_error_handlers
from app.http.forwarded import ForwardedHeaders
from app.http.guards import CredentialsInUrl, RequestLimits, SecurityHeaders
from app.http.json_bodies import JsonBodyLimits
from app.http.openapi import EDGE_ERRORS
from app.http.readiness import readiness_checks, redis_persistence, tool_workers_report
from app.http.security import CrossSiteGuard
from app.kit.config import get_settings
from app.kit.errors import ServiceUnavailable
from app.mail.transport import startup_line
from app.mcp.discovery import router as discovery_router
from app.mcp.server import mcp_transport
from app.metering.endpoints import router as metering_router
from app.metering.outbox import outbox_stats
from app.oauth.endpoints import router as oauth_router
from app.oauth.metadata import REGISTER_PATH
from app.observability.endpoints import install_api
from app.observability.exposition import authorized
from app.queue import close_waiter
from app.request_log.endpoints import router as request_log_router
from app.tiles.endpoints import router as tiles_router
from app.users.endpoints import router as accounts_router
from app.users.passwords import common_passwords
from app.users.service import dummy_password_hash
from app.v1.endpoints import router as v1_router
from app.v1.jobs import router as v1_jobs_router
from app.v1.reference import router as v1_reference_router
from app.v1.versions import ApiVersions

logger = logging.getLogger(__name__)


def create_app() -> FastAPI:
    mcp_sessions, mcp_app = mcp_transport(get_settings())

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        dummy_password_hash()  # before the first sign-in, which would otherwise pay it
        common_passwords()  # likewise for the first sign-up (~0.1 s to load the list)
        geodata.warm_up_upstream()  # not on the event loop at the first cache hit
        unsent = get_settings().smtp_url is None  # then a warning: development only
        logger.log(logging.WARNING if unsent else logging.INFO, startup_line(get_settings()))
        # What start-up built lives as long as the process: out of the collector's sight,
        # a full collection no longer walks it (here ~200,000 objects, 50-150 ms of a
        # stopped event loop each time a burst of requests triggers one)
        gc.freeze()
        # Mounted apps' lifespans do not run: the MCP session manager is run here.
        async with mcp_sessions.run():
            yield
            await close_waiter()

    docs = get_settings().docs_enabled
    app = FastAPI(
        title="Geospatial Data Service",
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        openapi_url="/openapi.json" if docs else None,
        redoc_url=None,
        responses=EDGE_ERRORS,  # what the guards and handlers may answer on any route
    )
    install_error_handlers(app)
    install_page_handlers(app)  # after the JSON handlers: HTML 404 for browser pages
    app.add_middleware(CrossSiteGuard)
    # inside RequestLimits: it reads bounded bodies only
    app.add_middleware(JsonBodyLimits, register_path=REGISTER_PATH)
    app.add_middleware(RequestLimits)  # outside CrossSiteGuard: nothing reads past the limit
    app.add_middleware(CredentialsInUrl)  # outside the routes and /mcp: no key in a URL
    app.add_middleware(SecurityHeaders)  # every answer carries the headers
    app.add_middleware(ApiVersions)  # outside the guards: their /v1 answers name it too
    # request ids, JSON logs, /metrics (with the outbox's state), tracing
    install_api(app, get_settings(), outbox_stats, INDEX_VERSION)
    app.add_middleware(ForwardedHeaders)  # outermost: no one sees a header a client forged
    app.include_router(accounts_router)
    app.include_router(metering_router)
    app.include_router(request_log_router)
    app.include_router(api_keys_router)
    app.include_router(billing_router)
    app.include_router(dashboard_auth_router)
    app.include_router(dashboard_router)
    app.include_router(dashboard_keys_router)
    app.include_router(dashboard_playground_router)
    app.include_router(dashboard_calls_router)
    app.include_router(dashboard_jobs_router)
    app.include_router(dashboard_job_router)
    app.include_router(dashboard_usage_router)
    app.include_router(dashboard_apps_router)
    app.include_router(dashboard_consent_router)
    app.include_router(oauth_router)
    app.include_router(dashboard_account_router)
    app.include_router(dashboard_recovery_router)
    app.include_router(dashboard_assets_router)
    app.include_router(v1_reference_router)
    app.include_router(discovery_router)
    # First: the data plane is the hot path, and routes are matched in order.
    app.router.routes[0:0] = [
        Route("/mcp", endpoint=mcp_app, include_in_schema=False),
        *v1_router.routes,
        *v1_jobs_router.routes,
        *tiles_router.routes,
    ]

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        """Liveness: the process answers (restart it if not). Says nothing of Redis or the DB."""
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False)
    async def readyz(request: Request) -> JSONResponse:
        """Readiness: Redis and the database answer (route traffic here only if so). Which
        check failed, the Redis persistence report and which tool queues some worker can
        answer (`toolWorkers`), only with the metrics token."""
        checks = await readiness_checks()
        ready = all(state == "ok" for state in checks.values())
        if not authorized(get_settings(), request.headers.get("authorization")):
            if ready:
                return JSONResponse({"status": "ok"})
            body = ServiceUnavailable("Not ready").to_body()
            return JSONResponse(body, 503, headers={"Retry-After": "5"})
        persistence = {
            "redisPersistence": await redis_persistence(),
            "toolWorkers": await tool_workers_report(INDEX_VERSION),
        }
        if ready:
            return JSONResponse({"status": "ok", "checks": checks, **persistence})
        down = ", ".join(name for name, state in checks.items() if state != "ok")
        body = ServiceUnavailable(f"Not ready: {down} unreachable").to_body()
        return JSONResponse(
            {**body, "checks": checks, **persistence}, 503, headers={"Retry-After": "5"}
        )

    return app
