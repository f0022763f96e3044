"""Bringing a Client ID Metadata Document client up to date at the authorization
endpoint, before the request opens its database session (issue 36).

The fetch (app/oauth/metadata_documents.py) waits on the event loop holding no thread
and no database connection; the database is touched only for a moment before it (is
the stored copy current?) and after it (store the copy), inside the same per-process
slot, so a flood of new URLs cannot take the threads or connections other requests
need. A document known current is remembered until its expiry; a failure for
GEOSVC_OAUTH_CIMD_FAILURE_CACHE_S in this process, so asking again for the same URL
is answered at once without another fetch. A refusal for want of a free slot is not
remembered: it says nothing about the document.
"""

from __future__ import annotations

import time
from functools import lru_cache

import anyio.to_thread
from sqlalchemy.exc import IntegrityError

from app.kit.clock import as_utc, utcnow
from app.kit.config import get_settings
from app.kit.db import new_session
from app.kit.ttl_cache import TTLCache
from app.models import OAuthClient
from app.oauth import clients, metadata_documents
from app.oauth.addresses import Resolver
from app.oauth.metadata_documents import FetchedDocument, FetchesBusy, MetadataDocumentError

FAILURES_KEPT = 10_000
CURRENT_KEPT = 10_000


@lru_cache
def slots() -> metadata_documents.FetchSlots:
    settings = get_settings()
    return metadata_documents.FetchSlots(
        settings.oauth_cimd_max_fetches,
        settings.oauth_cimd_max_fetches_per_host,
        settings.oauth_cimd_timeout_s,
        settings.oauth_cimd_fetch_burst,
    )


@lru_cache
def failures() -> TTLCache[str, str]:
    return TTLCache(get_settings().oauth_cimd_failure_cache_s, FAILURES_KEPT)


@lru_cache
def current() -> TTLCache[str, bool]:
    """Documents this process knows to be stored and current (until their expiry)."""
    return TTLCache(metadata_documents.MAX_CACHE_S, CURRENT_KEPT)


def _current_for_s(client_id: str) -> float | None:
    """Seconds the stored copy stays current, or None (missing or stale)."""
    with new_session() as session:
        client = session.get(OAuthClient, client_id)
        if client is None or not clients.is_current(client):
            return None
        assert client.metadata_expires_at is not None
        return (as_utc(client.metadata_expires_at) - utcnow()).total_seconds()


def _store(client_id: str, fetched: FetchedDocument) -> None:
    for attempt in (1, 2):  # a second try when another process stored it first
        with new_session() as session:
            try:
                clients.store_document(session, client_id, fetched)
                session.commit()
                return
            except IntegrityError:
                if attempt == 2:
                    raise


async def refresh(client_id: str, resolver: Resolver | None = None) -> None:
    """Fetch and store `client_id`'s document unless the stored copy is current;
    MetadataDocumentError or ClientMetadataError when it cannot be used, FetchesBusy when
    no slot is free. Other client ids are left to the authorization server."""
    settings = get_settings()
    if len(client_id) > metadata_documents.MAX_URL_LENGTH or not (
        metadata_documents.is_metadata_url(client_id, settings)
    ):
        return
    failure = failures().get(client_id)
    if failure is not None:
        raise MetadataDocumentError(failure)
    if current().get(client_id):
        return
    try:  # what the URL alone refuses takes no slot and none of the process's starts
        host, _port = metadata_documents.check_url(client_id, settings)
    except MetadataDocumentError as exc:
        failures().put(client_id, str(exc))
        raise
    # The site's slot first: names of one domain that resolve slowly hold a few of the
    # process's slots at most. The process's slot covers the database reads too: a flood
    # of new URLs takes at most this many threads and pooled connections.
    with slots().site_slot(host), slots().process_slot():
        expires_in_s = await anyio.to_thread.run_sync(_current_for_s, client_id)
        if expires_in_s is None:
            try:
                fetched = await metadata_documents.fetch(client_id, settings, slots(), resolver)
                await anyio.to_thread.run_sync(_store, client_id, fetched)
            except FetchesBusy:
                raise
            except (MetadataDocumentError, clients.ClientMetadataError) as exc:
                failures().put(client_id, str(exc))
                raise
            expires_in_s = fetched.max_age_s
    current().put(client_id, True, expires_at=time.monotonic() + expires_in_s)
