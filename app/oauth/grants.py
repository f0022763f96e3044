"""Connected apps (grants), their authorization codes and tokens.

A code and a refresh token are each used once, atomically: the row is marked used in a
transaction of its own before anything is issued, so two requests racing with the same
code or refresh token get one answer between them. Presenting a used code or a used
refresh token again is taken as a theft: every token of that family (the code it all
came from) is revoked (OAuth 2.1 section 4.3.1, RFC 9700 section 4.14).

Also when the second presentation comes while the first is still being answered, before
its tokens are stored: the second first leaves a mark (the code deleted, the refresh
token's own row revoked) and commits it, then revokes the family as stored so far; the
first, once its tokens are committed, looks for that mark (`revoke_if_replayed`). One of
the two always sees the other's work.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, event, or_, update
from sqlmodel import Session, col, select

from app.account_lock import lock_account
from app.kit.clock import as_utc, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.errors import NotFound
from app.metering.reports import last_used_by_key
from app.models import OAuthClient, OAuthCode, OAuthGrant, OAuthToken
from app.oauth import redirects
from app.oauth.secrets import new_grant_id, secret_hash
from app.oauth.verify import note_grant_revoked, note_tokens_revoked


def grant_for(
    session: Session, user_id: str, client_id: str, scope: str, *, generation: int | None = None
) -> OAuthGrant:
    """The person's active grant to this client (its scope widened), or a new one.
    `generation`: the account's as read with the approving sign-in; Unauthenticated if a
    password reset has since ended it (see app/account_lock.py)."""
    lock_account(session, user_id, generation=generation)
    grant = session.exec(
        select(OAuthGrant)
        .where(OAuthGrant.user_id == user_id, OAuthGrant.client_id == client_id)
        .where(col(OAuthGrant.revoked_at).is_(None))
        .order_by(col(OAuthGrant.created_at).desc())
    ).first()
    if grant is None:
        grant = OAuthGrant(id=new_grant_id(), user_id=user_id, client_id=client_id, scope=scope)
    else:
        grant.scope = " ".join(sorted(set(grant.scope.split()) | set(scope.split())))
    session.add(grant)
    session.flush()
    return grant


def save_code(
    session: Session,
    code: str,
    *,
    grant: OAuthGrant,
    redirect_uri: str,
    scope: str,
    resource: str,
    code_challenge: str,
    code_challenge_method: str,
) -> None:
    session.add(
        OAuthCode(
            code_hash=secret_hash(code),
            grant_id=grant.id,
            client_id=grant.client_id,
            redirect_uri=redirect_uri,
            scope=scope,
            resource=resource,
            code_challenge=code_challenge,
            code_challenge_method=code_challenge_method,
            expires_at=utcnow() + timedelta(seconds=get_settings().oauth_code_ttl_s),
        )
    )
    session.flush()


def _revoke_family(session: Session, family: str) -> list[str]:
    """Revoke every live token of a family; their access-token hashes."""
    rows = session.exec(
        select(OAuthToken).where(OAuthToken.family == family, col(OAuthToken.revoked_at).is_(None))
    ).all()
    now = utcnow()
    for row in rows:
        row.revoked_at = now
        session.add(row)
    return [row.access_token_hash for row in rows]


def consume_code(code: str, client_id: str) -> OAuthCode | None:
    """The code's row, now used, if `client_id` may redeem it (unused and unexpired); a
    code used before, or at the same time, revokes the tokens it gave. Commits on its own
    (see module doc)."""
    code_hash = secret_hash(code)
    with new_session() as session:
        row = session.get(OAuthCode, code_hash)
        if row is None or row.client_id != client_id:
            return None
        if as_utc(row.expires_at) <= utcnow() and row.used_at is None:
            return None
        taken = session.execute(
            update(OAuthCode)
            .where(col(OAuthCode.code_hash) == code_hash, col(OAuthCode.used_at).is_(None))
            .values(used_at=utcnow())
        )
        session.commit()
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            return row
    _code_replayed(code_hash)
    return None


def _code_replayed(code_hash: str) -> None:
    """The mark first (the code deleted, committed), then the family revoked."""
    with new_session() as session:
        session.execute(delete(OAuthCode).where(col(OAuthCode.code_hash) == code_hash))
        session.commit()
        revoked = _revoke_family(session, code_hash)
        session.commit()
    note_tokens_revoked(revoked)


def _refresh_replayed(row: OAuthToken) -> None:
    """The mark first (the refresh token's own row revoked, committed), then the family."""
    with new_session() as session:
        session.execute(
            update(OAuthToken)
            .where(col(OAuthToken.id) == row.id, col(OAuthToken.revoked_at).is_(None))
            .values(revoked_at=utcnow())
        )
        session.commit()
        revoked = [row.access_token_hash, *_revoke_family(session, row.family)]
        session.commit()
    note_tokens_revoked(revoked)


@dataclass(frozen=True)
class IssuedFrom:
    """What a token response redeemed: a code (`code_hash`) or a refresh token (the id
    of its row), and the family its new tokens belong to."""

    family: str
    code_hash: str | None = None
    token_id: int | None = None


def revoke_if_replayed(issued: IssuedFrom) -> bool:
    """After the tokens of `issued` are committed: when what it redeemed was presented
    again meanwhile (its mark, see the module doc), revoke the family, new tokens
    included, and say so."""
    with new_session() as session:
        if issued.code_hash is not None:
            replayed = session.get(OAuthCode, issued.code_hash) is None
        else:
            source = session.get(OAuthToken, issued.token_id)
            replayed = source is None or source.revoked_at is not None
        if not replayed:
            return False
        revoked = _revoke_family(session, issued.family)
        session.commit()
    note_tokens_revoked(revoked)
    return True


def consume_refresh_token(refresh_token: str, client_id: str) -> OAuthToken | None:
    """The token row whose refresh token this is, now used, if it is live and belongs to
    `client_id`; a refresh token used before revokes its family. Commits on its own."""
    token_hash = secret_hash(refresh_token)
    now = utcnow()
    with new_session() as session:
        row = session.exec(
            select(OAuthToken).where(OAuthToken.refresh_token_hash == token_hash)
        ).first()
        if row is None:
            return None
        grant = session.get(OAuthGrant, row.grant_id)
        if grant is None or grant.client_id != client_id:
            return None
        if row.revoked_at is not None or grant.revoked_at is not None:
            return None
        fresh = row.refresh_expires_at is not None and as_utc(row.refresh_expires_at) > now
        if not fresh and row.refresh_used_at is None:
            return None
        taken = session.execute(
            update(OAuthToken)
            .where(col(OAuthToken.id) == row.id, col(OAuthToken.refresh_used_at).is_(None))
            .where(col(OAuthToken.revoked_at).is_(None))
            .values(refresh_used_at=now)
        )
        session.commit()
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            return row
    # used before, or by a request still being answered: both taken as a theft
    _refresh_replayed(row)
    return None


def active_grant(session: Session, grant_id: str) -> OAuthGrant | None:
    grant = session.get(OAuthGrant, grant_id)
    return grant if grant is not None and grant.revoked_at is None else None


def store_tokens(
    session: Session,
    grant: OAuthGrant,
    *,
    family: str,
    access_token: str,
    refresh_token: str | None,
    scope: str,
    resource: str,
) -> None:
    """Keep the hashes of a freshly issued access token and its refresh token."""
    settings = get_settings()
    now = utcnow()
    session.add(
        OAuthToken(
            grant_id=grant.id,
            family=family,
            access_token_hash=secret_hash(access_token),
            refresh_token_hash=secret_hash(refresh_token) if refresh_token else None,
            scope=scope,
            resource=resource,
            access_expires_at=now + timedelta(seconds=settings.oauth_access_token_ttl_s),
            refresh_expires_at=(
                now + timedelta(seconds=settings.oauth_refresh_token_ttl_s)
                if refresh_token
                else None
            ),
        )
    )
    session.flush()


def find_token(session: Session, value: str) -> OAuthToken | None:
    """The row of an access or refresh token (any state)."""
    token_hash = secret_hash(value)
    return session.exec(
        select(OAuthToken).where(
            or_(
                col(OAuthToken.access_token_hash) == token_hash,
                col(OAuthToken.refresh_token_hash) == token_hash,
            )
        )
    ).first()


def revoke_token(session: Session, row: OAuthToken, *, whole_family: bool) -> list[str]:
    """Revoke a token (its access and refresh token together), or, for a refresh token,
    every token of its family (RFC 7009 section 2.1); the access-token hashes revoked."""
    rows = [row]
    if whole_family:
        rows = list(session.exec(select(OAuthToken).where(OAuthToken.family == row.family)))
    now = utcnow()
    for token in rows:
        if token.revoked_at is None:
            token.revoked_at = now
            session.add(token)
    session.flush()
    return [token.access_token_hash for token in rows]


def revoke_grant(session: Session, user_id: str, grant_id: str) -> None:
    """Disconnect an app: the grant and every token issued under it; NotFound if it is
    not this person's active grant."""
    grant = session.get(OAuthGrant, grant_id)
    if grant is None or grant.user_id != user_id or grant.revoked_at is not None:
        raise NotFound("No such connected app")
    now = utcnow()
    grant.revoked_at = now
    session.add(grant)
    session.execute(
        update(OAuthToken)
        .where(col(OAuthToken.grant_id) == grant_id, col(OAuthToken.revoked_at).is_(None))
        .values(revoked_at=now)
    )
    session.flush()


def revoke_all_grants(session: Session, user_id: str, *, now: datetime | None = None) -> list[str]:
    """Disconnect every app of the account (a password reset, a deletion): each grant and
    every token under it, so no refresh works from the commit on and no access token
    beyond a second after it (`note_grant_revoked`, run after the commit). Returns the
    grant ids. Flushes only."""
    now = now or utcnow()
    grant_ids = list(
        session.exec(
            select(OAuthGrant.id).where(
                OAuthGrant.user_id == user_id, col(OAuthGrant.revoked_at).is_(None)
            )
        )
    )
    if not grant_ids:
        return []
    session.execute(
        update(OAuthGrant).where(col(OAuthGrant.id).in_(grant_ids)).values(revoked_at=now)
    )
    session.execute(
        update(OAuthToken)
        .where(col(OAuthToken.grant_id).in_(grant_ids), col(OAuthToken.revoked_at).is_(None))
        .values(revoked_at=now)
    )
    session.flush()
    event.listen(session, "after_commit", lambda _s: _note_all(grant_ids), once=True)
    return grant_ids


def _note_all(grant_ids: list[str]) -> None:
    for grant_id in grant_ids:
        note_grant_revoked(grant_id)


@dataclass(frozen=True)
class ConnectedApp:
    grant_id: str
    name: str
    # Where the app is known from: its metadata document's host, or None when it
    # registered itself (its name is then only what it says of itself).
    verified_host: str | None
    redirect_hosts: list[str]
    scope: str
    connected_at: datetime
    last_used: datetime | None


def _live(now: datetime) -> Iterable[object]:
    return (
        col(OAuthToken.revoked_at).is_(None),
        or_(col(OAuthToken.refresh_expires_at) > now, col(OAuthToken.access_expires_at) > now),
    )


def connected_apps(session: Session, user_id: str) -> list[ConnectedApp]:
    """The person's apps holding a live token, most recently connected first."""
    now = utcnow()
    live_grants = select(OAuthToken.grant_id).where(*_live(now))  # type: ignore[arg-type]
    rows = session.exec(
        select(OAuthGrant, OAuthClient)
        .join(OAuthClient, col(OAuthClient.client_id) == col(OAuthGrant.client_id))
        .where(OAuthGrant.user_id == user_id, col(OAuthGrant.revoked_at).is_(None))
        .where(col(OAuthGrant.id).in_(live_grants))
        .order_by(col(OAuthGrant.created_at).desc())
    ).all()
    last_used = last_used_by_key(session, user_id)
    apps = []
    for grant, client in rows:
        uris: list[str] = json.loads(client.redirect_uris)
        apps.append(
            ConnectedApp(
                grant_id=grant.id,
                name=client.client_name,
                verified_host=redirects.host_of(client.client_id)
                if client.kind == "cimd"
                else None,
                redirect_hosts=sorted({redirects.host_of(uri) for uri in uris}),
                scope=grant.scope,
                connected_at=as_utc(grant.created_at),
                last_used=last_used.get(grant.id),
            )
        )
    return apps


def has_approved(session: Session, user_id: str, client_id: str) -> bool:
    """Whether this person has an active grant to this client: only then may the
    authorization endpoint send their browser to the client's redirect URI without a
    click of theirs (an error answer; docs/OAUTH.md, "Errors and clients nobody vetted")."""
    found = session.exec(
        select(OAuthGrant.id)
        .where(OAuthGrant.user_id == user_id, OAuthGrant.client_id == client_id)
        .where(col(OAuthGrant.revoked_at).is_(None))
        .limit(1)
    ).first()
    return found is not None
