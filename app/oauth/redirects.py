"""Redirect URIs: which may be registered, and when a requested one matches.

Matching is exact string comparison, with the one exception OAuth 2.1 and RFC 8252 make
for native apps: an http loopback URI (127.0.0.1, [::1], localhost) matches whatever its
port, since the app picks a free port at each sign-in. Registrable: https, http on a
loopback host, or a private-use scheme (`cursor://`, `vscode://`...) that is not one a
browser would run or read (`javascript:`, `data:`, `file:`...). No fragments, no user
info, no control characters or spaces.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

MAX_REDIRECT_URI = 2000
MAX_REDIRECT_URIS = 10
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,62}")
_UNSAFE_SCHEMES = frozenset(
    {"javascript", "data", "file", "vbscript", "about", "blob", "filesystem"}
    | {"ws", "wss", "ftp", "mailto", "tel", "sms", "chrome", "view-source"}
)
_FORBIDDEN_CHARACTERS = re.compile(r"[\x00-\x20\x7f\\]")
# A DNS label as a host name has it (RFC 1123; an IDN as its xn-- A-label), which is also
# all a CSP host-source may hold: the consent page's policy names this host.
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?", re.IGNORECASE)
MAX_HOST_NAME = 253


def registration_error(uri: object) -> str | None:
    """Why `uri` cannot be a redirect URI, or None when it can."""
    if not isinstance(uri, str) or not uri:
        return "a redirect URI must be a non-empty string"
    if len(uri) > MAX_REDIRECT_URI:
        return f"a redirect URI may be at most {MAX_REDIRECT_URI} characters"
    if _FORBIDDEN_CHARACTERS.search(uri):
        return "a redirect URI must not contain spaces, control characters or backslashes"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  # raises ValueError on a bad port
    except ValueError:
        return f"{uri!r} is not a valid URI"
    scheme = parts.scheme.lower()
    if not _SCHEME.fullmatch(scheme) or scheme != parts.scheme:
        return f"{uri!r} has no valid (lowercase) scheme"
    if parts.fragment or "#" in uri:
        return "a redirect URI must not have a fragment"
    if "@" in parts.netloc:
        return "a redirect URI must not carry user information"
    if scheme in ("http", "https") and not is_host(_host_part(parts.netloc)):
        return (
            f"{uri!r} has no valid host: a host name (letters, digits, hyphens; an "
            "international name as xn--), an IPv4 address or a bracketed IPv6 address"
        )
    if scheme == "https":
        return None
    if scheme == "http":
        if parts.hostname in LOOPBACK_HOSTS:
            return None
        return "http redirect URIs must be on a loopback host (127.0.0.1, [::1], localhost)"
    if scheme in _UNSAFE_SCHEMES:
        return f"the {scheme}: scheme cannot be a redirect URI"
    return None  # a private-use scheme of a native app


def _host_part(netloc: str) -> str:
    """The authority without its port (`[::1]:8080` -> `[::1]`)."""
    if netloc.endswith("]") or ":" not in netloc:
        return netloc
    return netloc.rsplit(":", 1)[0]


def is_host(host: str) -> bool:
    """Whether `host` (as in a URL's authority, without the port) is a host name or an IP
    literal, and nothing else: no wildcard, no `;`, quote or space a policy could read."""
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return False
        return True
    name = host[:-1] if host.endswith(".") else host
    if not name or len(name) > MAX_HOST_NAME:
        return False
    return all(_LABEL.fullmatch(label) for label in name.split("."))


def is_loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS


def _without_port(uri: str) -> tuple[str, str | None, str, str]:
    parts = urlsplit(uri)
    return parts.scheme, parts.hostname, parts.path, parts.query


def matches(registered: list[str], requested: str) -> bool:
    """Whether `requested` may receive the answer of a client registered with `registered`."""
    if requested in registered:
        return True
    if registration_error(requested) is not None or not is_loopback(requested):
        return False
    wanted = _without_port(requested)
    return any(is_loopback(uri) and _without_port(uri) == wanted for uri in registered)


def host_of(uri: str) -> str:
    """What the consent page shows: the host the answer goes to (or the app's scheme)."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return parts.netloc.lower()
    return f"{parts.scheme}:"


def form_action_source(uri: str) -> str:
    """The CSP source that lets the consent form's redirect reach `uri`."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"
