"""The discovery documents: authorization server metadata (RFC 8414, with the MCP
authorization specification's `client_id_metadata_document_supported`) and protected
resource metadata for /mcp (RFC 9728)."""

from __future__ import annotations

from typing import Any

from app.kit.config import Settings
from app.oauth.clients import AUTH_METHODS, SCOPES_SUPPORTED
from app.oauth.verify import resource_url

AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
REGISTER_PATH = "/register"
REVOKE_PATH = "/revoke"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
# RFC 9728 section 3.1: the resource's path appended; the bare one answers too.
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
ROOT_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"


def issuer(settings: Settings) -> str:
    return settings.base_url.rstrip("/")


def resource_metadata_url(settings: Settings) -> str:
    return issuer(settings) + RESOURCE_METADATA_PATH


def authorization_server_metadata(settings: Settings) -> dict[str, Any]:
    base = issuer(settings)
    return {
        "issuer": base,
        "authorization_endpoint": base + AUTHORIZE_PATH,
        "token_endpoint": base + TOKEN_PATH,
        "registration_endpoint": base + REGISTER_PATH,
        "revocation_endpoint": base + REVOKE_PATH,
        "scopes_supported": SCOPES_SUPPORTED,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        "service_documentation": base + "/",
    }


def protected_resource_metadata(settings: Settings) -> dict[str, Any]:
    return {
        "resource": resource_url(settings),
        "authorization_servers": [issuer(settings)],
        "scopes_supported": SCOPES_SUPPORTED,
        "bearer_methods_supported": ["header"],
        "resource_name": "Geospatial Data Service",
        "resource_documentation": issuer(settings) + "/",
    }
