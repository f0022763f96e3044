"""The authorization server: Authlib's OAuth 2.1 pieces over our clients and grants.

Authorization code with PKCE (S256 only, required of every client), refresh tokens with
rotation (`grants` makes each one single use), revocation (RFC 7009), dynamic client
registration (RFC 7591), the `iss` authorization-response parameter (RFC 9207) and
resource indicators (RFC 8707: the only resource is our /mcp, and every token is bound
to it). The HTTP edge hands it an `HttpRequest` (app/oauth/requests.py) and gets an
`OAuthResponse` back. A server is made per request around its database session.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from authlib.common.urls import add_params_to_uri
from authlib.consts import default_json_headers
from authlib.oauth2.rfc6749 import (
    AuthorizationServer,
    InvalidClientError,
    InvalidRequestError,
    InvalidScopeError,
    OAuth2Error,
    OAuth2Request,
)
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc6749.models import AuthorizationCodeMixin
from authlib.oauth2.rfc6749.requests import JsonRequest
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import (
    ClientRegistrationEndpoint,
    InvalidClientMetadataError,
    InvalidRedirectURIError,
)
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter
from sqlmodel import Session

from app.kit.config import get_settings
from app.models import OAuthCode, OAuthGrant, OAuthToken, User
from app.oauth import clients, grants
from app.oauth.metadata import authorization_server_metadata, issuer
from app.oauth.metadata_documents import MetadataDocumentError
from app.oauth.requests import HttpRequest, JsonRequestPayload, OAuthResponse, Request
from app.oauth.secrets import (
    new_access_token,
    new_client_secret,
    new_code,
    new_refresh_token,
    secret_hash,
)
from app.oauth.verify import resource_url

AUTH_METHODS = list(clients.AUTH_METHODS)
# Asked for by some hosts to get a refresh token; granted by grant_types instead.
TOLERATED_SCOPES = frozenset({"offline_access"})


class InvalidTargetError(OAuth2Error):
    """RFC 8707: the requested resource is not one this server issues tokens for."""

    error = "invalid_target"


def plain(text: str) -> str:
    """An error_description OAuth allows: printable ASCII without " or \\ (RFC 6749 5.2)."""
    ascii_text = text.encode("ascii", "replace").decode()
    kept = (c for c in ascii_text if " " <= c <= "~")
    return "".join("'" if c == '"' else "/" if c == "\\" else c for c in kept)


def _canonical(uri: str) -> str:
    """Lowercase scheme and host, no trailing slash (RFC 8707 / MCP canonical URIs)."""
    parts = urlsplit(uri.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def check_resources(request: OAuth2Request) -> None:
    """Each `resource` asked for must be our /mcp; none asked for means it anyway."""
    ours = _canonical(resource_url(get_settings()))
    for resource in request.payload.datalist.get("resource", []):
        if _canonical(resource) != ours:
            raise InvalidTargetError(f"This server issues tokens for {ours} only")


class StrictPKCE(CodeChallenge):
    """PKCE with S256, required of every client (OAuth 2.1; `plain` is refused)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge (S256)")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256")
        super().validate_code_challenge(grant, redirect_uri)


class ResourceIndicator:
    def __call__(self, grant: Any) -> None:
        grant.register_hook("after_validate_authorization_request_payload", self._check)
        grant.register_hook("after_validate_token_request", self._check)

    def _check(self, grant: Any, _result: object) -> None:
        check_resources(grant.request)


class _Code(AuthorizationCodeMixin):
    def __init__(self, row: OAuthCode) -> None:
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = row.code_challenge_method

    def get_redirect_uri(self) -> str:
        return self.row.redirect_uri

    def get_scope(self) -> str:
        return self.row.scope


class _Token:
    """A token row as Authlib's refresh and revocation code asks about it."""

    def __init__(self, row: OAuthToken, client_id: str, is_refresh: bool) -> None:
        self.row = row
        self.client_id = client_id
        self.is_refresh = is_refresh

    def check_client(self, client: clients.ClientView) -> bool:
        return bool(client.client_id == self.client_id)

    def get_scope(self) -> str:
        return self.row.scope


class CodeGrant(AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    @property
    def session(self) -> Session:
        return self.server.session

    def generate_authorization_code(self) -> str:
        return new_code()

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        user: User = request.user
        grant = grants.grant_for(
            self.session,
            user.id,
            request.client.client_id,
            request.scope,
            generation=user.generation,
        )
        data = request.payload.data
        grants.save_code(
            self.session,
            code,
            grant=grant,
            redirect_uri=request.payload.redirect_uri,
            scope=request.scope,
            resource=resource_url(get_settings()),
            code_challenge=data["code_challenge"],
            code_challenge_method=data["code_challenge_method"],
        )

    def query_authorization_code(self, code: str, client: clients.ClientView) -> _Code | None:
        row = grants.consume_code(code, client.client_id)  # single use: see grants
        return _Code(row) if row is not None else None

    def delete_authorization_code(self, authorization_code: _Code) -> None:
        pass  # consumed when queried

    def authenticate_user(self, authorization_code: _Code) -> OAuthGrant | None:
        return grants.active_grant(self.session, authorization_code.row.grant_id)


class RotatingRefreshGrant(RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh returns a new one

    def validate_token_request(self) -> None:
        check_resources(self.request)
        super().validate_token_request()

    def authenticate_refresh_token(self, refresh_token: str) -> _Token | None:
        client_id = self.request.client.client_id
        row = grants.consume_refresh_token(refresh_token, client_id)  # single use
        return _Token(row, client_id, is_refresh=True) if row is not None else None

    def authenticate_user(self, refresh_token: _Token) -> OAuthGrant | None:
        return grants.active_grant(self.server.session, refresh_token.row.grant_id)

    def revoke_old_credential(self, refresh_token: _Token) -> None:
        pass  # marked used when authenticated


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def authenticate_token(self, request: OAuth2Request, client: Any) -> _Token | None:
        """Authlib's, but another client's token is answered as an unknown one is: 200,
        nothing revoked (RFC 7009 section 2.2; Authlib answered 400 invalid_grant, which
        also told the caller the token was real)."""
        self.check_params(request, client)
        token = self.query_token(request.form["token"], request.form.get("token_type_hint"))
        return token if token is not None and token.check_client(client) else None

    def query_token(self, token_string: str, token_type_hint: str | None) -> _Token | None:
        session: Session = self.server.session
        row = grants.find_token(session, token_string)
        if row is None:
            return None
        grant = session.get(OAuthGrant, row.grant_id)
        if grant is None:
            return None
        is_refresh = row.refresh_token_hash == secret_hash(token_string)
        return _Token(row, grant.client_id, is_refresh)

    def revoke_token(self, token: _Token, request: OAuth2Request) -> None:
        hashes = grants.revoke_token(self.server.session, token.row, whole_family=token.is_refresh)
        self.server.revoked_access_hashes.extend(hashes)


def _metadata_error(exc: clients.ClientMetadataError) -> OAuth2Error:
    if exc.redirect_uri:
        return InvalidRedirectURIError(plain(str(exc)))
    return InvalidClientMetadataError(plain(str(exc)))


class Registration(ClientRegistrationEndpoint):
    """Open dynamic registration (RFC 7591 section 3): no initial access token; the edge
    limits it per client address."""

    def authenticate_token(self, request: JsonRequest) -> bool:
        return True

    def extract_client_metadata(self, request: JsonRequest) -> dict[str, Any]:
        """Authlib's, once every field has its type (Authlib's claims fail on some)."""
        try:
            clients.check_types(request.payload.data)
        except clients.ClientMetadataError as exc:
            raise _metadata_error(exc) from exc
        return dict(super().extract_client_metadata(request))

    def create_registration_response(self, request: JsonRequest) -> tuple[int, Any, Any]:
        """Authlib's, answering the metadata as stored (defaults filled in, RFC 7591
        section 3.2.1), which Authlib would answer as sent."""
        request.credential = True
        client_metadata = self.extract_client_metadata(request)
        client_info = self.generate_client_info(request)
        self.save_client(client_info, client_metadata, request)
        return 201, {**client_metadata, **client_info}, default_json_headers

    def get_server_metadata(self) -> dict[str, Any]:
        return authorization_server_metadata(get_settings())

    def generate_client_info(self, request: JsonRequest) -> dict[str, Any]:
        info: dict[str, Any] = {
            "client_id": clients.new_client_id(),
            "client_id_issued_at": int(time.time()),
        }
        method = request.payload.data.get("token_endpoint_auth_method") or "client_secret_basic"
        if method != "none":
            info.update(client_secret=new_client_secret(), client_secret_expires_at=0)
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: JsonRequest
    ) -> clients.ClientView:
        try:
            checked = clients.check_metadata(client_metadata, document=False)
        except clients.ClientMetadataError as exc:
            raise _metadata_error(exc) from exc
        # What was accepted, as stored (a default filled in, whitespace in the name folded).
        client_metadata.update(
            client_name=checked.client_name,
            grant_types=checked.grant_types,
            response_types=["code"],
            token_endpoint_auth_method=checked.token_endpoint_auth_method,
        )
        row = clients.register(
            self.server.session,
            checked,
            client_info["client_id"],
            client_info.get("client_secret"),
        )
        return clients.ClientView(row)


class Issuer(IssuerParameter):
    def get_issuer(self) -> str:
        return issuer(get_settings())


class OAuthServer(AuthorizationServer):
    def __init__(self, session: Session, *, fetch_client_documents: bool = False) -> None:
        super().__init__(scopes_supported=clients.SCOPES_SUPPORTED)
        self.session = session
        # Only the authorization endpoint fetches Client ID Metadata Documents (its edge,
        # before this session: app/oauth/document_refresh.py) and wants them current.
        self.fetch_client_documents = fetch_client_documents
        self.revoked_access_hashes: list[str] = []
        # What a token response redeemed, checked for a replay once committed (grants)
        self.issued_from: grants.IssuedFrom | None = None
        self.register_token_generator("default", self._generate_token)
        self.register_grant(CodeGrant, [StrictPKCE(required=True), ResourceIndicator()])
        self.register_grant(RotatingRefreshGrant)
        self.register_endpoint(Revocation)
        self.register_endpoint(Registration)
        self.register_extension(Issuer())

    def query_client(self, client_id: str) -> clients.ClientView | None:
        try:
            row = clients.find(self.session, client_id, fresh=self.fetch_client_documents)
        except (MetadataDocumentError, clients.ClientMetadataError) as exc:
            raise InvalidClientError(description=plain(f"Client metadata document: {exc}")) from exc
        return clients.ClientView(row) if row is not None else None

    def validate_requested_scope(self, scope: str | None) -> None:
        if scope and not set(scope.split()) <= {clients.SCOPE, *TOLERATED_SCOPES}:
            raise InvalidScopeError(f"The only scope is {clients.SCOPE}")

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        grant: OAuthGrant = request.user
        if request.authorization_code is not None:
            family = request.authorization_code.row.code_hash
            self.issued_from = grants.IssuedFrom(family, code_hash=family)
        else:
            family = request.refresh_token.row.family
            token_id = request.refresh_token.row.id
            self.issued_from = grants.IssuedFrom(family, token_id=token_id)
        grants.store_tokens(
            self.session,
            grant,
            family=family,
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            scope=token["scope"],
            resource=resource_url(get_settings()),
        )

    def _generate_token(
        self,
        grant_type: str,
        client: clients.ClientView,
        user: Any = None,
        scope: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        token: dict[str, Any] = {
            "token_type": "Bearer",
            "access_token": new_access_token(),
            "expires_in": get_settings().oauth_access_token_ttl_s,
            "scope": clients.SCOPE,
        }
        if include_refresh_token:
            token["refresh_token"] = new_refresh_token()
        return token

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass  # no listeners

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        if isinstance(request, OAuth2Request):
            return request
        return Request(request)

    def create_json_request(self, request: HttpRequest) -> JsonRequest:
        json_request = JsonRequest(request.method, request.uri, headers=request.headers)
        json_request.payload = JsonRequestPayload(request.json_body or {})
        return json_request

    def handle_response(self, status: int, body: Any, headers: Any) -> OAuthResponse:
        return OAuthResponse(status, body, list(headers))

    def error_redirect(self, error: OAuth2Error) -> OAuthResponse:
        """An authorization error sent back to a redirect URI already validated for the
        client (`error.redirect_uri`), with `state` and `iss` (RFC 9207)."""
        status, _body, headers = error()
        response = OAuthResponse(status, "", list(headers))
        assert response.location is not None
        response.location = add_params_to_uri(response.location, [("iss", issuer(get_settings()))])
        return response
