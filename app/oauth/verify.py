"""Access-token verification for /mcp: the resource server's half of OAuth.

Works as API-key verification does (app/api_keys/verify.py): an entry (a live, revoked,
expired or unknown token) is cached `key_cache_ttl_s` (1 s) counted from before the
database read, so a revocation anywhere is honoured by every api process within a
second; while the database is unreachable a token read within `db_outage_cache_s` is
answered from the cache unless Redis marks its grant or the token itself revoked. A
token is accepted only for the resource it was issued for (RFC 8707): this /mcp.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

import anyio.to_thread
from sqlmodel import select

from app.api_keys.verify import mark_revoked, revoked_lately
from app.kit.clock import as_utc, utcnow
from app.kit.config import Settings
from app.kit.db import new_session
from app.kit.errors import ServiceUnavailable, Unauthenticated, unavailable_for
from app.kit.per_settings import PerSettings
from app.kit.principal import CallerPrincipal
from app.kit.ttl_cache import SingleFlight, TTLCache
from app.models import OAuthGrant, OAuthToken
from app.oauth.secrets import secret_hash


def resource_url(settings: Settings) -> str:
    """The canonical URI of our MCP server: the audience of every token (RFC 8707)."""
    return settings.base_url.rstrip("/") + "/mcp"


@dataclass(frozen=True)
class TokenRecord:
    """What the database said of an access-token hash (`principal` None: no such token)."""

    principal: CallerPrincipal | None
    expires_at: datetime | None = None
    resource: str | None = None
    revoked: bool = False
    token_hash: str = ""


class _Verifier:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cache: TTLCache[str, TokenRecord] = TTLCache(settings.key_cache_ttl_s)

    def load(self, token_hash: str) -> TokenRecord:
        expires_at = time.monotonic() + self.cache.ttl_s  # before the read: see module doc
        try:
            with new_session() as session:
                found = session.exec(
                    select(OAuthToken, OAuthGrant)
                    .join(OAuthGrant, OAuthGrant.id == OAuthToken.grant_id)  # type: ignore[arg-type]
                    .where(OAuthToken.access_token_hash == token_hash)
                ).first()
        except Exception as exc:
            unavailable = unavailable_for(exc)
            if unavailable is None:
                raise
            return self._last_known(token_hash, unavailable)
        if found is None:
            record = TokenRecord(None, token_hash=token_hash)
        else:
            token, grant = found
            principal = CallerPrincipal(
                grant.id, grant.user_id, frozenset(token.scope.split()), kind="oauth"
            )
            record = TokenRecord(
                principal,
                expires_at=as_utc(token.access_expires_at),
                resource=token.resource,
                revoked=token.revoked_at is not None or grant.revoked_at is not None,
                token_hash=token_hash,
            )
        self.cache.put(token_hash, record, expires_at=expires_at)
        return record

    def _last_known(self, token_hash: str, unavailable: ServiceUnavailable) -> TokenRecord:
        record = self.cache.get_recent(token_hash, self.settings.db_outage_cache_s)
        if record is None:
            raise unavailable
        principal = record.principal
        if principal is not None and not record.revoked:
            if revoked_lately(principal.key_id, token_hash[:32]):
                return TokenRecord(principal, record.expires_at, record.resource, True, token_hash)
        return record

    def check(self, record: TokenRecord) -> CallerPrincipal:
        if record.principal is None:
            raise Unauthenticated("Invalid access token: sign in again")
        if record.revoked:
            raise Unauthenticated("This connection was revoked: sign in again to reconnect")
        if record.expires_at is None or record.expires_at <= utcnow():
            raise Unauthenticated("The access token has expired: refresh it or sign in again")
        if record.resource != resource_url(self.settings):
            raise Unauthenticated("This access token was not issued for this server")
        return record.principal


_verifiers: PerSettings[_Verifier] = PerSettings(_Verifier)


def _verifier() -> _Verifier:
    return _verifiers.get()


_loads: SingleFlight[str, TokenRecord] = SingleFlight()


async def averify_access_token(token: str) -> CallerPrincipal:
    """The principal of a bearer access token; Unauthenticated for an unknown, expired,
    revoked or foreign one; ServiceUnavailable when it cannot be checked."""
    token_hash = secret_hash(token)
    verifier = _verifier()
    record = verifier.cache.get(token_hash)
    if record is None:
        record = await _loads.load(
            token_hash, lambda: anyio.to_thread.run_sync(verifier.load, token_hash)
        )
    return verifier.check(record)


def note_grant_revoked(grant_id: str) -> None:
    """After a grant's revocation commits: this process forgets its tokens at once (the
    others within a second), and Redis remembers it for a database outage."""
    if (current := _verifiers.built()) is not None:
        current.cache.invalidate_where(
            lambda record: record.principal is not None and record.principal.key_id == grant_id
        )
    mark_revoked(grant_id)


def note_tokens_revoked(access_token_hashes: list[str]) -> None:
    for token_hash in access_token_hashes:
        if (current := _verifiers.built()) is not None:
            current.cache.invalidate(token_hash)
        mark_revoked(token_hash[:32])
