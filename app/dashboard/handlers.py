"""Page-flavoured answers: the sign-in redirect, the authorization endpoint's refusals
(app/dashboard/authorize_admission.py) and an HTML 404 for browser routes.

The JSON API keeps its `{"error": ...}` 404: a request gets the HTML page only when it
asks for HTML (`Accept: text/html`, as a browser's navigation does) on a path outside
the JSON API. The page keeps the navigation for a signed-in visitor (a 404 is raised
before any route's dependencies run, so the session is looked up here).
"""

from __future__ import annotations

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.dashboard.authorize_admission import AuthorizationRefused
from app.dashboard.rendering import render, to_sign_in
from app.deps.session_tokens import user_for_token
from app.deps.users import SESSION_COOKIE, SignInRequired
from app.kit.db import new_session
from app.kit.errors import Unauthenticated, unavailable_for
from app.models import User

# First path segments of the JSON API (and of /mcp): these never answer HTML.
_API_SEGMENTS = frozenset(
    {
        "auth",
        "account",
        "api-keys",
        "subscription",
        "usage",
        "me",
        "mcp",
        "v1",
        "healthz",
        "docs",
        "openapi.json",
    }
    | {".well-known", "token", "register", "revoke"}
)
_API_PREFIXES = ("/billing/portal", "/billing/webhooks", "/billing/invoices")


def wants_page(request: Request) -> bool:
    if request.method not in ("GET", "HEAD"):
        return False
    if "text/html" not in request.headers.get("accept", ""):
        return False
    path = request.url.path
    first_segment = path.lstrip("/").split("/", 1)[0]
    return first_segment not in _API_SEGMENTS and not path.startswith(_API_PREFIXES)


def signed_in_or_none(token: str) -> User | None:
    """The session's user, or None: signed out, or the database cannot say (a 404 page
    never becomes a 503 for want of its navigation)."""
    try:
        with new_session() as session:
            return user_for_token(session, token)
    except Unauthenticated:
        return None
    except Exception as exc:
        if unavailable_for(exc) is None:
            raise
        return None


def install_page_handlers(app: FastAPI) -> None:
    """Call after the JSON error handlers are installed: other HTTP errors go to them."""
    json_handler = app.exception_handlers[StarletteHTTPException]

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 404 and wants_page(request):
            token = request.cookies.get(SESSION_COOKIE)
            user = await anyio.to_thread.run_sync(signed_in_or_none, token) if token else None
            return render(request, "not_found.html", status=404, user=user)
        response = json_handler(request, exc)
        return await response if not isinstance(response, Response) else response

    async def on_sign_in_required(_request: Request, _exc: Exception) -> Response:
        return to_sign_in()

    app.add_exception_handler(StarletteHTTPException, on_http_error)

    async def on_authorization_refused(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, AuthorizationRefused)
        return exc.response

    app.add_exception_handler(SignInRequired, on_sign_in_required)
    app.add_exception_handler(AuthorizationRefused, on_authorization_refused)
