"""Identifiers and random secrets."""

from __future__ import annotations

import secrets
import string

BASE62 = string.digits + string.ascii_letters
_LOWER_ALNUM = string.digits + string.ascii_lowercase


def random_base62(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def random_lower_alnum(length: int) -> str:
    return "".join(secrets.choice(_LOWER_ALNUM) for _ in range(length))


def new_user_id() -> str:
    return "usr_" + random_lower_alnum(20)
