"""The service's own secret keys: the pepper of key hashes and signed links, the OAuth
signing key. Production sets each (app/kit/production.py refuses to start without);
development generates each once under data_dir, kept 0600."""

from __future__ import annotations

import secrets
from pathlib import Path

from app.kit.config import Settings


def pepper(settings: Settings) -> bytes:
    if settings.secret_pepper is not None:
        return settings.secret_pepper.get_secret_value().encode()
    if not settings.is_development:
        raise RuntimeError("GEOSVC_SECRET_PEPPER must be set outside development")
    return _kept_secret(settings.data_dir / "pepper")


def previous_pepper(settings: Settings) -> bytes | None:
    previous = settings.secret_pepper_previous
    return previous.get_secret_value().encode() if previous else None


def oauth_key(settings: Settings) -> bytes:
    """GEOSVC_OAUTH_SIGNING_KEY, or in development one generated once under data_dir."""
    if settings.oauth_signing_key is not None:
        return settings.oauth_signing_key.get_secret_value().encode()
    if not settings.is_development:
        raise RuntimeError("GEOSVC_OAUTH_SIGNING_KEY must be set outside development")
    return _kept_secret(settings.data_dir / "oauth_signing_key")


def _kept_secret(path: Path) -> bytes:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(32))
        path.chmod(0o600)
    return path.read_text().strip().encode()
