"""OAuth clients: those that register themselves (RFC 7591) and those known by a Client
ID Metadata Document (`metadata_documents`), both kept in `oauth_clients`, and the view
of a client that Authlib's grants ask questions of (`ClientView`)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin
from sqlmodel import Session

from app.kit.clock import as_utc, utcnow
from app.kit.config import get_settings
from app.kit.ids import random_lower_alnum
from app.kit.validation import has_control_characters, plain_text
from app.models import OAuthClient
from app.oauth import metadata_documents, redirects
from app.oauth.secrets import secret_hash

SCOPE = "read:data"
SCOPES_SUPPORTED = [SCOPE]
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
MAX_CLIENT_NAME = 100
UNNAMED = "Unnamed app"


class ClientMetadataError(Exception):
    """Registration metadata (or a metadata document) that cannot be accepted."""

    def __init__(self, message: str, *, redirect_uri: bool = False) -> None:
        super().__init__(message)
        self.redirect_uri = redirect_uri  # RFC 7591: invalid_redirect_uri, not ..._metadata


@dataclass(frozen=True)
class CheckedMetadata:
    client_name: str
    client_uri: str | None
    redirect_uris: list[str]
    grant_types: list[str]
    token_endpoint_auth_method: str


def _client_name(value: object) -> str:
    if value is None:
        return UNNAMED
    if not isinstance(value, str) or not value.strip():
        raise ClientMetadataError("client_name must be a non-empty string")
    name = " ".join(value.split())
    try:
        plain_text(name)  # no control or bidi characters: the name is shown on the consent page
    except ValueError as exc:
        raise ClientMetadataError(f"client_name {exc}") from exc
    if len(name) > MAX_CLIENT_NAME:
        raise ClientMetadataError(f"client_name may be at most {MAX_CLIENT_NAME} characters")
    return name


def _client_uri(value: object) -> str | None:
    """Shown as the app's homepage only when it is a plain https URL."""
    if not isinstance(value, str) or len(value) > 512 or has_control_characters(value):
        return None
    parts = urlsplit(value)
    return value if parts.scheme == "https" and parts.hostname else None


# RFC 7591 section 2 (and 2.3's software_statement): the type of each field a client may
# send. Checked before anything reads them (Authlib's claims crashed on some: 500s).
_STRINGS = (
    "client_name client_uri logo_uri scope tos_uri policy_uri jwks_uri software_id "
    "software_version software_statement token_endpoint_auth_method client_secret"
).split()
_STRING_LISTS = ("redirect_uris", "grant_types", "response_types", "contacts")


def check_types(metadata: Mapping[str, Any]) -> None:
    """Each known field, when present and not null, has the type RFC 7591 gives it."""
    for name, value in metadata.items():
        if value is None:
            continue
        if name in _STRINGS and not isinstance(value, str):
            raise ClientMetadataError(f"{name} must be a string")
        if name in _STRING_LISTS and not (
            isinstance(value, list) and all(isinstance(item, str) for item in value)
        ):
            raise ClientMetadataError(
                f"{name} must be a list of strings", redirect_uri=name == "redirect_uris"
            )
        if name == "jwks" and not isinstance(value, dict):
            raise ClientMetadataError("jwks must be a JSON object")


def check_metadata(metadata: Mapping[str, Any], *, document: bool) -> CheckedMetadata:
    """Our rules on top of RFC 7591's: what a client may register, or a metadata document
    may say (`document`: a public client, no secret)."""
    check_types(metadata)
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise ClientMetadataError("redirect_uris must list at least one URI", redirect_uri=True)
    if len(uris) > redirects.MAX_REDIRECT_URIS:
        raise ClientMetadataError(
            f"at most {redirects.MAX_REDIRECT_URIS} redirect_uris", redirect_uri=True
        )
    for uri in uris:
        problem = redirects.registration_error(uri)
        if problem:
            raise ClientMetadataError(problem, redirect_uri=True)
    grant_types = metadata.get("grant_types") or ["authorization_code"]
    if not isinstance(grant_types, list) or not set(grant_types) <= GRANT_TYPES:
        raise ClientMetadataError("grant_types may only be authorization_code and refresh_token")
    if "authorization_code" not in grant_types:
        raise ClientMetadataError("grant_types must include authorization_code")
    response_types = metadata.get("response_types") or ["code"]
    if response_types != ["code"]:
        raise ClientMetadataError('response_types may only be ["code"]')
    method = metadata.get("token_endpoint_auth_method") or (
        "none" if document else "client_secret_basic"
    )
    if document and (method != "none" or "client_secret" in metadata):
        raise ClientMetadataError(
            "a client metadata document describes a public client: token_endpoint_auth_method "
            '"none" and no client_secret'
        )
    if method not in AUTH_METHODS:
        raise ClientMetadataError(f"token_endpoint_auth_method must be one of {AUTH_METHODS}")
    scope = metadata.get("scope")
    if scope is not None and (not isinstance(scope, str) or not set(scope.split()) <= {SCOPE}):
        raise ClientMetadataError(f"the only scope is {SCOPE}")
    return CheckedMetadata(
        client_name=_client_name(metadata.get("client_name")),
        client_uri=_client_uri(metadata.get("client_uri")),
        redirect_uris=list(uris),
        grant_types=list(dict.fromkeys(grant_types)),
        token_endpoint_auth_method=method,
    )


def new_client_id() -> str:
    return "mcp_" + random_lower_alnum(24)


def register(
    session: Session, checked: CheckedMetadata, client_id: str, client_secret: str | None
) -> OAuthClient:
    """Store a dynamically registered client (its secret only as a hash)."""
    client = OAuthClient(
        client_id=client_id,
        kind="dcr",
        client_name=checked.client_name,
        client_uri=checked.client_uri,
        redirect_uris=json.dumps(checked.redirect_uris),
        grant_types=" ".join(checked.grant_types),
        token_endpoint_auth_method=checked.token_endpoint_auth_method,
        client_secret_hash=secret_hash(client_secret) if client_secret else None,
    )
    session.add(client)
    session.flush()
    return client


def find(session: Session, client_id: str | None, *, fresh: bool) -> OAuthClient | None:
    """The client `client_id` names. `fresh` (only at the authorization endpoint) wants a
    metadata-document client's copy current: its edge fetched the document before opening
    this session (app/oauth/document_refresh.py), so a copy missing or stale here means
    that fetch failed. The token and revocation endpoints use the stored copy."""
    if not client_id or len(client_id) > metadata_documents.MAX_URL_LENGTH:
        return None
    client = session.get(OAuthClient, client_id)
    if not metadata_documents.is_metadata_url(client_id, get_settings()):
        return client if client is not None and client.kind == "dcr" else None
    if fresh and not is_current(client):
        raise metadata_documents.MetadataDocumentError(
            "the client metadata document could not be fetched; try again"
        )
    return client


def is_current(client: OAuthClient | None) -> bool:
    return (
        client is not None
        and client.metadata_expires_at is not None
        and as_utc(client.metadata_expires_at) > utcnow()
    )


def store_document(
    session: Session, client_id: str, fetched: metadata_documents.FetchedDocument
) -> None:
    """Keep a fetched document's client (checked: ClientMetadataError) for its max-age."""
    checked = check_metadata(fetched.document, document=True)
    client = session.get(OAuthClient, client_id)
    if client is None:
        client = OAuthClient(
            client_id=client_id, kind="cimd", client_name=checked.client_name, redirect_uris="[]"
        )
    client.client_name = checked.client_name
    client.client_uri = checked.client_uri
    client.redirect_uris = json.dumps(checked.redirect_uris)
    client.grant_types = " ".join(checked.grant_types)
    client.token_endpoint_auth_method = "none"
    client.metadata_expires_at = utcnow() + timedelta(seconds=fetched.max_age_s)
    session.add(client)
    session.flush()


class ClientView(ClientMixin):
    """A stored client as Authlib's grants and endpoints ask about it."""

    def __init__(self, row: OAuthClient) -> None:
        self.row = row
        self.client_id = row.client_id
        self.redirect_uris: list[str] = json.loads(row.redirect_uris)

    @property
    def name(self) -> str:
        return self.row.client_name

    @property
    def is_metadata_document(self) -> bool:
        return self.row.kind == "cimd"

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # the request must say which one (it is what the consent page shows)

    def get_allowed_scope(self, scope: str | None) -> str:
        return SCOPE  # the only scope; an unknown one was refused before this

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirects.matches(self.redirect_uris, redirect_uri)

    def check_client_secret(self, client_secret: str) -> bool:
        stored = self.row.client_secret_hash
        return stored is not None and hmac.compare_digest(secret_hash(client_secret), stored)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.row.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.row.grant_types.split()
