"""The OAuth secrets: random tokens and codes with recognisable prefixes, stored only as
HMAC-SHA256 under GEOSVC_OAUTH_SIGNING_KEY, and the consent form's signature."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Mapping

from app.kit import secret_keys
from app.kit.config import Settings, get_settings
from app.kit.credentials import ACCESS_TOKEN_PREFIX, AUTHORIZATION_CODE_PREFIX, REFRESH_TOKEN_PREFIX
from app.kit.ids import random_base62, random_lower_alnum

# 43 base62 characters: about 256 bits, as many as a 32-byte key.
SECRET_LENGTH = 43
GRANT_ID_PREFIX = "app_"

_key: tuple[Settings, bytes] | None = None
_key_lock = threading.Lock()


def _signing_key() -> bytes:
    """The key of the current Settings (read once: in development it is a file)."""
    global _key
    settings = get_settings()
    current = _key
    if current is None or current[0] is not settings:
        with _key_lock:
            current = _key = (settings, secret_keys.oauth_key(settings))
    return current[1]


def secret_hash(value: str) -> str:
    """What is stored of a token, code or client secret (hex HMAC-SHA256)."""
    return hmac.new(_signing_key(), value.encode(), hashlib.sha256).hexdigest()


def new_access_token() -> str:
    return ACCESS_TOKEN_PREFIX + random_base62(SECRET_LENGTH)


def new_refresh_token() -> str:
    return REFRESH_TOKEN_PREFIX + random_base62(SECRET_LENGTH)


def new_code() -> str:
    return AUTHORIZATION_CODE_PREFIX + random_base62(SECRET_LENGTH)


def new_client_secret() -> str:
    return random_base62(SECRET_LENGTH)


def new_grant_id() -> str:
    """A connected app's id: where a key id would go, never equal to one (a keyId has no
    underscore)."""
    return GRANT_ID_PREFIX + random_lower_alnum(16)


def consent_signature(session_token: str, params: Mapping[str, str]) -> str:
    """The consent form's CSRF token: bound to the signed-in session and to exactly the
    request shown, so it approves nothing else and nobody else's page can post it."""
    message = json.dumps([session_token, sorted(params.items())], separators=(",", ":"))
    return hmac.new(_signing_key(), b"consent\0" + message.encode(), hashlib.sha256).hexdigest()


def consent_signature_ok(session_token: str, params: Mapping[str, str], signature: str) -> bool:
    return hmac.compare_digest(consent_signature(session_token, params), signature)
