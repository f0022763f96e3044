"""The demo account of `geosvc dev`, and its key and password kept across restarts.

The database holds only the key's HMAC and the password's hash, as for any account. The
plaintexts live in the person's copy, `<data dir>/demo.txt` (mode 0600, the lines
`geosvc dev` printed). A restart on the same data directory reads that file back and
keeps the key while it is still active and the password while it still signs in; one
that was revoked, expired or changed in the dashboard (or a missing file) gets a new one.
"""

from __future__ import annotations

import hmac
import os
import re
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import Session, select

DEMO_EMAIL = "demo@example.com"
DEMO_KEY_NAME = "demo (geosvc dev)"
DEMO_FILE = "demo.txt"

_KEY = re.compile(r"\bsvc_live_ak_[a-z0-9]+_[A-Za-z0-9]+\b")
_PASSWORD = re.compile(r"demo sign-in: \S+ / (\S+)\)")


@dataclass(frozen=True)
class DemoAccount:
    email: str
    password: str
    api_key: str
    kept: bool  # the key and password of the previous start


def saved_secrets(data_dir: Path) -> tuple[str | None, str | None]:
    """(key, password) from the copy a previous start wrote, each None when absent."""
    try:
        text = (data_dir / DEMO_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None, None
    key, password = _KEY.search(text), _PASSWORD.search(text)
    return (key.group(0) if key else None), (password.group(1) if password else None)


def write_copy(data_dir: Path, lines: list[str]) -> Path:
    """The lines a person needs, readable by them only (they hold the key and password)."""
    path = data_dir / DEMO_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)  # an older copy may have had a looser mode
    with os.fdopen(descriptor, "w", encoding="utf-8") as copy:
        copy.write("\n".join(lines) + "\n")
    return path


def _active_demo_key(session: Session, user_id: str, plaintext: str | None) -> str | None:
    """The key id of `plaintext` when it is an active, unexpired demo key of this account,
    else None."""
    from app.api_keys.service import hash_secret, is_expired
    from app.api_keys.verify import parse_bearer
    from app.kit.errors import Unauthenticated
    from app.models import ApiKey

    if plaintext is None:
        return None
    try:
        key_id, secret, _env = parse_bearer(f"Bearer {plaintext}")
    except Unauthenticated:
        return None
    key = session.get(ApiKey, key_id)
    if (
        key is None
        or key.user_id != user_id
        or key.name != DEMO_KEY_NAME
        or key.revoked_at is not None
        or is_expired(key)
        or not hmac.compare_digest(key.secret_hash, hash_secret(secret))
    ):
        return None
    return key_id


def demo_account(session: Session, data_dir: Path) -> DemoAccount:
    """The demo account with the key and password of the previous start when they still
    work, else new ones (and the other demo keys revoked). Flushes only."""
    import secrets

    from app.api_keys.service import create_key, list_keys, revoke_key
    from app.models import User
    from app.users.service import create_user, password_matches, set_password

    saved_key, saved_password = saved_secrets(data_dir)
    user = session.exec(select(User).where(User.email == DEMO_EMAIL)).first()
    if user is None:
        password = secrets.token_urlsafe(12)
        user = create_user(session, email=DEMO_EMAIL, password=password, name="Demo")
    elif saved_password is not None and password_matches(user.password_hash, saved_password):
        password = saved_password
    else:
        password = secrets.token_urlsafe(12)
        set_password(user, password)
        session.add(user)
    kept_key_id = _active_demo_key(session, user.id, saved_key)
    for key in list_keys(session, user.id):
        if key.name == DEMO_KEY_NAME and key.key_id != kept_key_id:
            revoke_key(session, user.id, key.key_id)
    if kept_key_id is None or saved_key is None:
        _key, new_key = create_key(session, user.id, DEMO_KEY_NAME)
        return DemoAccount(DEMO_EMAIL, password, new_key, kept=False)
    return DemoAccount(DEMO_EMAIL, password, saved_key, kept=password == saved_password)
