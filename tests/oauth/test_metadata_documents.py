"""Client ID Metadata Documents: a client whose client_id is the URL of its metadata
document, fetched from a real web server on 127.0.0.1 (admitted only by the development
setting GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK; the default server refuses such addresses)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.fakes.oauth_host import Answer, CallbackServer, MetadataServer
from tests.oauth.conftest import Host, approve
from tests.support.factories import sign_up
from tests.support.fixtures import Backend
from tests.support.live_server import LiveServer, start_live_server


@pytest.fixture(scope="module")
def cimd_server(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = backend.env(GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK="true")
    log = tmp_path_factory.mktemp("cimd") / f"server-{backend.name}.log"
    server = start_live_server(env, log)
    yield server
    server.stop()


@pytest.fixture
def documents() -> Iterator[MetadataServer]:
    server = MetadataServer().start()
    yield server
    server.stop()


@pytest.fixture
def signed_in(cimd_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=cimd_server.url, timeout=30) as client:
        sign_up(client)
        yield client


def document(documents: MetadataServer, callback: CallbackServer, **fields: Any) -> dict:
    return {
        "client_id": documents.client_id,
        "client_name": "Document Host",
        "redirect_uris": [callback.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
        **fields,
    }


def host_for(server: LiveServer, documents: MetadataServer, callback: CallbackServer) -> Host:
    host = Host(server.url, callback.redirect_uri)
    host.discover()
    host.client_id = documents.client_id  # no registration: the URL is the client id
    return host


def test_a_document_client_signs_in_without_registering(
    cimd_server: LiveServer,
    documents: MetadataServer,
    callback: CallbackServer,
    signed_in: httpx.Client,
) -> None:
    documents.publish(document(documents, callback), **{"Cache-Control": "max-age=600"})
    host = host_for(cimd_server, documents, callback)

    page = signed_in.get(host.authorization_url())
    assert page.status_code == 200, page.text
    assert "Document Host" in page.text
    assert f"from 127.0.0.1:{documents.port}" in page.text  # where the name comes from
    answer = approve(signed_in, host.authorization_url())
    tokens = host.exchange(answer["code"])
    assert tokens.status_code == 200, tokens.text
    assert host.refresh(tokens.json()["refresh_token"]).status_code == 200
    assert len(documents.requests) == 1  # cached for its max-age, not fetched again


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"client_id": "http://127.0.0.1:1/other.json"}, "not exactly its own URL"),
        ({"redirect_uris": ["http://evil.example/cb"]}, "loopback"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "public client"),
        ({"client_name": None, "redirect_uris": None}, "redirect_uris"),
    ],
)
def test_a_bad_document_is_refused_on_a_page(
    cimd_server: LiveServer,
    documents: MetadataServer,
    callback: CallbackServer,
    signed_in: httpx.Client,
    change: dict,
    reason: str,
) -> None:
    published = {k: v for k, v in {**document(documents, callback), **change}.items() if v}
    documents.publish(published)

    page = signed_in.get(host_for(cimd_server, documents, callback).authorization_url())

    assert page.status_code == 400
    assert "location" not in page.headers
    assert reason in page.text


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (Answer(status=302, headers={"Location": "http://127.0.0.1:1/"}), "HTTP 302"),
        (Answer(body=b"[" + b"1," * 4000 + b"1]"), "larger than"),
        (Answer(body=b"<html>"), "not JSON"),
    ],
)
def test_a_document_that_is_not_a_document_is_refused(
    cimd_server: LiveServer,
    documents: MetadataServer,
    callback: CallbackServer,
    signed_in: httpx.Client,
    answer: Answer,
    reason: str,
) -> None:
    documents.answer = answer
    page = signed_in.get(host_for(cimd_server, documents, callback).authorization_url())
    assert page.status_code == 400
    assert reason in page.text


def test_the_redirect_uri_must_be_one_the_document_lists(
    cimd_server: LiveServer,
    documents: MetadataServer,
    callback: CallbackServer,
    signed_in: httpx.Client,
) -> None:
    documents.publish(document(documents, callback))
    host = host_for(cimd_server, documents, callback)
    page = signed_in.get(host.authorization_url(redirect_uri="https://evil.example/cb"))
    assert page.status_code == 400
    assert "location" not in page.headers


def test_without_the_development_setting_private_addresses_are_never_fetched(
    live_server: LiveServer, documents: MetadataServer, callback: CallbackServer
) -> None:
    """SSRF: a client_id naming an address inside our network is refused unfetched."""
    documents.publish(document(documents, callback))
    host = Host(live_server.url, callback.redirect_uri)
    host.discover()
    with httpx.Client(base_url=live_server.url) as person:
        sign_up(person)
        for client_id in (
            f"https://127.0.0.1:{documents.port}/client.json",
            "https://10.0.0.1/client.json",
            documents.client_id,  # http
        ):
            page = person.get(host.authorization_url(client_id=client_id))
            assert page.status_code == 400, client_id
    assert documents.requests == []


def test_metadata_document_rules_in_json(documents: MetadataServer) -> None:
    """The fake publishes what it is given (a guard on the fixture itself)."""
    documents.publish({"a": 1})
    with httpx.Client() as client:
        assert json.loads(client.get(documents.client_id).content) == {"a": 1}
