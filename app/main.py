"""The FastAPI application: control plane, dashboard, /mcp, health."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.accounts.endpoints import router as accounts_router
from app.api_keys.endpoints import router as api_keys_router
from app.billing.endpoints import router as billing_router
from app.dashboard.auth_pages import router as dashboard_auth_router
from app.dashboard.pages import router as dashboard_router
from app.errors import install_http_error_handlers
from app.metering.endpoints import router as metering_router
from app.security import CrossSiteGuard


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    yield


def create_app() -> FastAPI:
    app = FastAPI(
        title="Geospatial Data Service",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    install_http_error_handlers(app)
    app.add_middleware(CrossSiteGuard)
    app.include_router(accounts_router)
    app.include_router(metering_router)
    app.include_router(api_keys_router)
    app.include_router(billing_router)
    app.include_router(dashboard_auth_router)
    app.include_router(dashboard_router)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
