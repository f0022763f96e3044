"""The official Python SDK's OAuth client (`mcp.client.auth.OAuthClientProvider`) signs in
by itself: it reads the 401's resource metadata, the authorization server metadata,
registers, sends the person to the consent page (played here with a signed-in cookie
jar), checks `state` and `iss`, exchanges the code with PKCE and the resource, and calls
/mcp with the token; a stored, expired token is refreshed without the person."""

from __future__ import annotations

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from app.geodata.catalogue import TOOL_SPECS
from tests.oauth.conftest import approve
from tests.support.live_server import LiveServer


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def provider_for(
    live_server: LiveServer, person: httpx.Client, storage: MemoryStorage, visits: list[str]
) -> OAuthClientProvider:
    answers: list[dict[str, str]] = []

    async def open_browser(url: str) -> None:
        visits.append(url)
        answers.append(await anyio.to_thread.run_sync(approve, person, url))

    async def wait_for_callback() -> AuthorizationCodeResult:
        answer = answers.pop()
        return AuthorizationCodeResult(
            code=answer["code"], state=answer["state"], iss=answer["iss"]
        )

    metadata = OAuthClientMetadata(
        client_name="SDK test host",
        redirect_uris=[AnyUrl("http://127.0.0.1:33418/callback")],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return OAuthClientProvider(
        f"{live_server.url}/mcp", metadata, storage, open_browser, wait_for_callback
    )


async def list_tools(live_server: LiveServer, provider: OAuthClientProvider) -> int:
    http = httpx2.AsyncClient(auth=provider, timeout=30)
    url = f"{live_server.url}/mcp"
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        return len((await client.list_tools()).tools)


async def test_the_sdk_signs_in_and_refreshes(
    live_server: LiveServer, person: httpx.Client
) -> None:
    storage, visits = MemoryStorage(), []
    provider = provider_for(live_server, person, storage, visits)

    assert await list_tools(live_server, provider) == len(TOOL_SPECS)

    assert len(visits) == 1
    assert f"resource={live_server.url.replace(':', '%3A').replace('/', '%2F')}%2Fmcp" in visits[0]
    assert storage.client_info is not None
    assert storage.client_info.client_id.startswith("mcp_")
    assert storage.tokens is not None
    assert storage.tokens.access_token.startswith("svc_at_")
    first = storage.tokens

    # Later: the stored access token has expired; the SDK refreshes it, no person involved.
    storage.tokens = first.model_copy(update={"expires_in": 0})
    again = provider_for(live_server, person, storage, visits)
    again.context.token_expiry_time = 1.0  # long past (0 would mean "unknown": valid)
    assert await list_tools(live_server, again) == len(TOOL_SPECS)

    assert len(visits) == 1
    assert storage.tokens.refresh_token != first.refresh_token  # rotated
