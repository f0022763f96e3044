"""What the authorization endpoint does before it opens a database session: the
per-address rate (app/oauth/rate_limit.py) and, for a Client ID Metadata Document
client, the fetch of its document (app/oauth/document_refresh.py), which waits on the
event loop. A route dependency (`ADMIT_FIRST`), so it runs before the endpoint's own
(the session, the user). A refusal is raised (`AuthorizationRefused`, answered by
app/dashboard/handlers.py) so nothing else runs for it: a page of ours, as the redirect
URI is not yet checked. The page is a fixed one filled by string formatting, not a
template: a flood of strangers is what these refusals answer, and each costs its
server's event loop (a fifth of a refusal's time went into rendering the layout).
"""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import HTMLResponse

from app.dashboard.assets import asset_url
from app.deps.client import client_ip_of
from app.oauth import document_refresh, rate_limit
from app.oauth.clients import ClientMetadataError
from app.oauth.metadata_documents import FetchesBusy, MetadataDocumentError
from app.oauth.server import plain

BUSY_RETRY_S = 5

# templates/oauth_error.html's card in a page without the signed-in navigation (nobody's
# session is read before admission).
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cannot connect the app · Geospatial Data Service</title>
<link rel="stylesheet" href="{stylesheet}"></head>
<body><main><div class="card error" role="alert" data-testid="oauth-error">
<h1>This app cannot be connected</h1><p>{message}</p>
<p class="muted small">Error: <span class="mono">{code}</span>. Nothing was shared with the
app; tell its developer what this page says.</p></div></main></body></html>
"""


class AuthorizationRefused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _refused(status: int, code: str, message: str, **headers: str) -> AuthorizationRefused:
    page = _PAGE.format(
        stylesheet=asset_url("dashboard.css"), message=escape(message), code=escape(code)
    )
    response = HTMLResponse(page, status, headers={"Cache-Control": "no-store", **headers})
    return AuthorizationRefused(response)


async def _client_id(request: Request) -> str | None:
    """The first client_id, as the authorization server reads it."""
    source = await request.form() if request.method == "POST" else request.query_params
    values = source.getlist("client_id")
    return values[0] if values and isinstance(values[0], str) else None


async def admit_authorization(request: Request) -> None:
    """AuthorizationRefused: 429 over the rate, 503 while every fetch slot is taken, 400
    for a document that cannot be used."""
    wait = await rate_limit.retry_after("authorize", client_ip_of(request.client))
    if wait is not None:
        message = f"Too many authorization requests from your address; retry in {wait} s."
        raise _refused(429, "temporarily_unavailable", message, **{"Retry-After": str(wait)})
    client_id = await _client_id(request)
    if client_id is None:
        return
    try:
        await document_refresh.refresh(client_id)
    except FetchesBusy as exc:
        raise _refused(
            503,
            "temporarily_unavailable",
            plain(f"Client metadata document: {exc}"),
            **{"Retry-After": str(BUSY_RETRY_S)},
        ) from exc
    except (MetadataDocumentError, ClientMetadataError) as exc:
        raise _refused(400, "invalid_client", plain(f"Client metadata document: {exc}")) from exc


ADMIT_FIRST: list[Any] = [Depends(admit_authorization)]
