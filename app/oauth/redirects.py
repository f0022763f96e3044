"""Redirect URIs: which may be registered, and when a requested one matches.

Matching is exact string comparison, with the one exception OAuth 2.1 and RFC 8252 make
for native apps: an http loopback URI (127.0.0.1, [::1], localhost) matches whatever its
port, since the app picks a free port at each sign-in. Registrable: https, http on a
loopback host, or a private-use scheme (`cursor://`, `vscode://`...) that is not one a
browser would run or read (`javascript:`, `data:`, `file:`...). No fragments, no user
info, no control characters or spaces.
"""

from __future__ import annotations

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
    if scheme == "https":
        return None if parts.hostname else f"{uri!r} has no host"
    if scheme == "http":
        if parts.hostname in LOOPBACK_HOSTS:
            return None
        return "http redirect URIs must be on a loopback host (127.0.0.1, [::1], localhost)"
    if scheme in _UNSAFE_SCHEMES:
        return f"the {scheme}: scheme cannot be a redirect URI"
    return None  # a private-use scheme of a native app


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
