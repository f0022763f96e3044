"""Client ID Metadata Documents: a client_id that is an https URL names the JSON document
that describes the client, which the service fetches (draft-ietf-oauth-client-id-metadata-
document, as the MCP authorization specification uses it).

Fetching a URL a stranger chose is a server-side request forgery risk, and a way to hold
the service's resources open, so a fetch:
- takes https only, with a path and no fragment, user info or dot segments;
- resolves the host once and connects only to those addresses, each of them public
  (app/oauth/addresses.py): the connection is pinned to the vetted address while TLS's
  SNI and the Host header keep the name, so a name that answers differently the second
  time gains nothing;
- follows no redirect and reads at most MAX_DOCUMENT_BYTES;
- finishes within GEOSVC_OAUTH_CIMD_TIMEOUT_S *in total* (resolution, connection, TLS,
  headers and body), not per read: a server dribbling a byte at a time is cut off;
- runs on the event loop (no thread, no database connection held while it waits), in
  one of a few slots per process and per site (taken by the caller, site first, before
  the name is resolved: app/oauth/document_refresh.py) and per remote host
  (`FetchSlots`): when they are taken it is refused at once rather than queued. A
  process also starts fetches at a bounded pace (a token bucket as fast as its slots
  can turn over, `total` per timeout, in bursts of GEOSVC_OAUTH_CIMD_FETCH_BURST): a
  crowd of new URLs arriving together, or all cut off at the deadline and sent again
  together, costs the process a few starts at a time, not every slot's at once;
- answers one fixed message whatever went wrong on the network, so the operating
  system's error text (refused, reset, unreachable) tells nobody which ports are open.
The document is then trusted for its Cache-Control max-age, kept between MIN_CACHE_S and
MAX_CACHE_S. `GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK` (development and tests only) admits http
and loopback addresses.
"""

from __future__ import annotations

import json
import re
import ssl
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpcore
import httpx

from app.kit.config import Settings
from app.kit.json_text import json_problem
from app.oauth import addresses
from app.oauth.addresses import AddressRefused, IPAddress, Resolver, ResolverBusy

MAX_URL_LENGTH = 512
MAX_DOCUMENT_BYTES = 5 * 1024
MIN_CACHE_S = 60
DEFAULT_CACHE_S = 3600
MAX_CACHE_S = 86400
USER_AGENT = "geosvc-oauth (client metadata fetch)"
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)


class MetadataDocumentError(Exception):
    """The client's metadata document cannot be used; the message says why."""


class FetchesBusy(MetadataDocumentError):
    """Every fetch slot (of this process or for this remote host) is taken: try later.
    Not the document's fault, so never remembered as its failure."""


@dataclass(frozen=True)
class FetchedDocument:
    document: dict[str, Any]
    max_age_s: int


class FetchSlots:
    """Fetches in flight, at most `total` in this process, `per_host` for the names of one
    site (`addresses.site_of`: a1.evil.test and a2.evil.test are one) and `per_host` to
    one remote host (an IPv4 address, an IPv6 /64), started at most `total` per
    `timeout_s` in bursts of `burst`. Taken and given back on the event loop.

    The site's slot is taken first, from the URL alone, and held through resolution:
    a domain whose name server answers slowly (or never) holds `per_host` of the
    process's slots at most, not all of them (issue 51, item 7)."""

    def __init__(self, total: int, per_host: int, timeout_s: float, burst: int) -> None:
        self.total, self.per_host = total, per_host
        self.in_flight = 0
        self.per_remote: Counter[str] = Counter()
        self.per_site: Counter[str] = Counter()
        self.starts_per_s = total / timeout_s
        self.burst = float(burst)
        self.tokens, self.refilled_at = self.burst, time.monotonic()

    def _start_allowed(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.refilled_at) * self.starts_per_s)
        self.refilled_at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True

    @contextmanager
    def process_slot(self) -> Iterator[None]:
        if self.in_flight >= self.total or not self._start_allowed():
            raise FetchesBusy(
                "too many client metadata documents are being fetched; retry in a few seconds"
            )
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1

    @contextmanager
    def site_slot(self, host: str) -> Iterator[None]:
        """For the URL's host name, before the process's slot and its resolution."""
        with self._held(self.per_site, addresses.site_of(host)):
            yield

    @contextmanager
    def host_slot(self, address: IPAddress) -> Iterator[None]:
        with self._held(self.per_remote, addresses.site_of(str(address))):
            yield

    @contextmanager
    def _held(self, counts: Counter[str], key: str) -> Iterator[None]:
        if counts[key] >= self.per_host:
            raise FetchesBusy(
                "too many client metadata documents are being fetched from this host; "
                "retry in a few seconds"
            )
        counts[key] += 1
        try:
            yield
        finally:
            counts[key] -= 1
            if not counts[key]:
                del counts[key]


def is_metadata_url(client_id: str, settings: Settings) -> bool:
    if client_id.startswith("https://"):
        return True
    return settings.oauth_cimd_allow_loopback and client_id.startswith("http://")


def check_url(url: str, settings: Settings) -> tuple[str, int]:
    """The URL's host and port, or MetadataDocumentError: what the URL alone refuses (its
    form; an address literal that is not public), before any slot is taken."""
    if len(url) > MAX_URL_LENGTH:
        raise MetadataDocumentError(f"client_id URLs may be at most {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise MetadataDocumentError("client_id is not a valid URL") from exc
    insecure_ok = settings.oauth_cimd_allow_loopback and parts.scheme == "http"
    if parts.scheme != "https" and not insecure_ok:
        raise MetadataDocumentError("a client_id URL must use https")
    if not parts.hostname or "@" in parts.netloc:
        raise MetadataDocumentError("a client_id URL needs a host and no user information")
    if parts.path in ("", "/") or parts.fragment or "#" in url:
        raise MetadataDocumentError("a client_id URL needs a path and no fragment")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise MetadataDocumentError("a client_id URL must not contain . or .. segments")
    ip = addresses.literal(parts.hostname)
    if ip is not None and not addresses.allowed(
        ip, allow_loopback=settings.oauth_cimd_allow_loopback
    ):
        raise MetadataDocumentError("the client_id host is not a public address")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _max_age(cache_control: str | None) -> int:
    if cache_control and "no-store" in cache_control.lower():
        return MIN_CACHE_S
    match = _MAX_AGE.search(cache_control or "")
    seconds = int(match.group(1)) if match else DEFAULT_CACHE_S
    return max(MIN_CACHE_S, min(MAX_CACHE_S, seconds))


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the vetted addresses (in order) whatever host the URL names; TLS is
    started by httpcore with the URL's host as SNI, so the certificate is checked
    against the name."""

    def __init__(self, vetted: list[IPAddress]) -> None:
        self.vetted = vetted
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        failure: Exception = httpcore.ConnectError("no address")
        for address in self.vetted:
            try:
                return await self.inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@lru_cache
def _tls() -> ssl.SSLContext:
    return httpx.create_ssl_context(trust_env=False)  # httpx's defaults (certifi's CAs)


def _unreachable(settings: Settings) -> MetadataDocumentError:
    """The one answer for every network failure (no OS error text: a port oracle)."""
    return MetadataDocumentError(
        "the client_id URL did not answer with a document over HTTPS within "
        f"{settings.oauth_cimd_timeout_s:g} s"
    )


async def _get(url: str, vetted: list[IPAddress], settings: Settings) -> tuple[bytes, str | None]:
    """The body and Cache-Control of a 200 answer from one of the vetted addresses."""
    netloc = urlsplit(url).netloc
    headers = [
        (b"Host", netloc.encode()),
        (b"Accept", b"application/json"),
        (b"User-Agent", USER_AGENT.encode()),
    ]
    pool = httpcore.AsyncConnectionPool(
        ssl_context=_tls(), network_backend=PinnedBackend(vetted), max_connections=1
    )
    async with pool, pool.stream("GET", url, headers=headers) as response:
        if response.status != 200:
            raise MetadataDocumentError(
                f"the client_id URL answered HTTP {response.status}, not the document"
            )
        body = b""
        async for chunk in response.aiter_stream():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise MetadataDocumentError(
                    f"the client metadata document is larger than {MAX_DOCUMENT_BYTES} bytes"
                )
        answer = {name.lower(): value for name, value in response.headers}
        cache_control = answer.get(b"cache-control")
    return body, cache_control.decode("latin-1") if cache_control else None


async def fetch(
    url: str, settings: Settings, slots: FetchSlots, resolver: Resolver | None = None
) -> FetchedDocument:
    """The document at `url` as a JSON object, or MetadataDocumentError (FetchesBusy when
    the remote host's slots are taken). The caller holds the site's slot and one of the
    process's (`FetchSlots.site_slot`, then `process_slot`)."""
    host, port = check_url(url, settings)
    try:
        with anyio.fail_after(settings.oauth_cimd_timeout_s):
            vetted = await addresses.resolve_once(
                host,
                port,
                resolver or addresses.system_resolver,
                allow_loopback=settings.oauth_cimd_allow_loopback,
            )
            with slots.host_slot(vetted[0]):
                body, cache_control = await _get(url, vetted, settings)
    except AddressRefused as exc:
        raise MetadataDocumentError(str(exc)) from exc
    except ResolverBusy as exc:
        raise FetchesBusy(
            "too many client metadata documents are being fetched; retry in a few seconds"
        ) from exc
    except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError,
            OSError, TimeoutError, ssl.SSLError) as exc:  # fmt: skip
        raise _unreachable(settings) from exc
    problem = json_problem(body)
    if problem is not None:
        raise MetadataDocumentError(f"the client metadata document {problem}")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise MetadataDocumentError("the client metadata document is not JSON") from exc
    if not isinstance(document, dict):
        raise MetadataDocumentError("the client metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise MetadataDocumentError("the document's client_id is not exactly its own URL")
    return FetchedDocument(document, _max_age(cache_control))
