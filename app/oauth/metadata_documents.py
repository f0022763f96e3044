"""Client ID Metadata Documents: a client_id that is an https URL names the JSON document
that describes the client, which the service fetches (draft-ietf-oauth-client-id-metadata-
document, as the MCP authorization specification uses it).

Fetching a URL a stranger chose is a server-side request forgery risk, so a fetch: takes
https only, with a path and no fragment, user info or dot segments; connects only to
public addresses (checked on the resolved names *and* on the address actually connected
to, so a name that changes its answer in between gains nothing); follows no redirect;
reads at most MAX_DOCUMENT_BYTES within GEOSVC_OAUTH_CIMD_TIMEOUT_S. The document is then
trusted for its Cache-Control max-age, kept between MIN_CACHE_S and MAX_CACHE_S.
`GEOSVC_OAUTH_CIMD_ALLOW_LOOPBACK` (development and tests only) admits http and loopback.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.config import Settings

MAX_URL_LENGTH = 512
MAX_DOCUMENT_BYTES = 5 * 1024
MIN_CACHE_S = 60
DEFAULT_CACHE_S = 3600
MAX_CACHE_S = 86400
USER_AGENT = "geosvc-oauth (client metadata fetch)"
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)


class MetadataDocumentError(Exception):
    """The client's metadata document cannot be used; the message says why."""


@dataclass(frozen=True)
class FetchedDocument:
    document: dict[str, Any]
    max_age_s: int


def is_metadata_url(client_id: str, settings: Settings) -> bool:
    if client_id.startswith("https://"):
        return True
    return settings.oauth_cimd_allow_loopback and client_id.startswith("http://")


def _check_url(url: str, settings: Settings) -> tuple[str, int]:
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
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _address_allowed(address: str, settings: Settings) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_global:
        return True
    return settings.oauth_cimd_allow_loopback and ip.is_loopback


def _check_resolves_publicly(host: str, port: int, settings: Settings) -> None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise MetadataDocumentError(f"the client_id host {host!r} does not resolve") from exc
    if not infos or not all(_address_allowed(str(info[4][0]), settings) for info in infos):
        raise MetadataDocumentError("the client_id host is not a public address")


def _max_age(cache_control: str | None) -> int:
    if cache_control and "no-store" in cache_control.lower():
        return MIN_CACHE_S
    match = _MAX_AGE.search(cache_control or "")
    seconds = int(match.group(1)) if match else DEFAULT_CACHE_S
    return max(MIN_CACHE_S, min(MAX_CACHE_S, seconds))


def fetch(url: str, settings: Settings) -> FetchedDocument:
    """The document at `url` as a JSON object, or MetadataDocumentError."""
    host, port = _check_url(url, settings)
    _check_resolves_publicly(host, port, settings)
    headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
    try:
        with (
            httpx.Client(
                timeout=settings.oauth_cimd_timeout_s, follow_redirects=False, trust_env=False
            ) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            stream = response.extensions.get("network_stream")
            peer = stream.get_extra_info("server_addr") if stream is not None else None
            if not peer or not _address_allowed(str(peer[0]), settings):
                raise MetadataDocumentError("the client_id host is not a public address")
            if response.status_code != 200:
                raise MetadataDocumentError(
                    f"the client_id URL answered HTTP {response.status_code}, not the document"
                )
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise MetadataDocumentError(
                        f"the client metadata document is larger than {MAX_DOCUMENT_BYTES} bytes"
                    )
            cache_control = response.headers.get("cache-control")
    except httpx.HTTPError as exc:
        raise MetadataDocumentError(f"the client_id URL could not be fetched ({exc})") from exc
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise MetadataDocumentError("the client metadata document is not JSON") from exc
    if not isinstance(document, dict):
        raise MetadataDocumentError("the client metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise MetadataDocumentError("the document's client_id is not exactly its own URL")
    return FetchedDocument(document, _max_age(cache_control))
