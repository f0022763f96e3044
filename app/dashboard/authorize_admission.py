"""What the authorization endpoint does before it opens a database session: the
per-address rate (app/oauth/rate_limit.py) and, for a Client ID Metadata Document
client, the fetch of its document (app/oauth/document_refresh.py), which waits on the
event loop. A route dependency (`ADMIT_FIRST`), so it runs before the endpoint's own
(the session, the user). A refusal is raised (`AuthorizationRefused`, answered by
app/dashboard/handlers.py) so nothing else runs for it: a page of ours, as the redirect
URI is not yet checked.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request, Response

from app.accounts.service import client_ip_of
from app.dashboard.rendering import render
from app.oauth import document_refresh, rate_limit
from app.oauth.clients import ClientMetadataError
from app.oauth.metadata_documents import FetchesBusy, MetadataDocumentError
from app.oauth.server import plain

BUSY_RETRY_S = 5


class AuthorizationRefused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _refused(
    request: Request, status: int, code: str, message: str, **headers: str
) -> AuthorizationRefused:
    response = render(request, "oauth_error.html", status=status, code=code, message=message)
    response.headers.update(headers)
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
        raise _refused(
            request, 429, "temporarily_unavailable", message, **{"Retry-After": str(wait)}
        )
    client_id = await _client_id(request)
    if client_id is None:
        return
    try:
        await document_refresh.refresh(client_id)
    except FetchesBusy as exc:
        raise _refused(
            request,
            503,
            "temporarily_unavailable",
            plain(f"Client metadata document: {exc}"),
            **{"Retry-After": str(BUSY_RETRY_S)},
        ) from exc
    except (MetadataDocumentError, ClientMetadataError) as exc:
        raise _refused(
            request, 400, "invalid_client", plain(f"Client metadata document: {exc}")
        ) from exc


ADMIT_FIRST: list[Any] = [Depends(admit_authorization)]
