"""What the json module takes but the service cannot: JSON too deep to handle and text
that is not text (issue 36, item 8, and a later probe).

- **Nesting.** Python's json module (and the MCP SDK and pydantic over it) recurses once
  per level: a body nested a few thousand deep raises RecursionError deep inside a route.
- **Half a surrogate pair.** JSON may escape a lone UTF-16 surrogate (`"\\ud800"`), and
  json.loads gives a Python string no UTF-8 encoder takes: a name or a redirect URI with
  one raised UnicodeEncodeError at the database insert, a 500.

`json_problem` says which, for a request body (app/http/json_bodies.py) and for a
document fetched from elsewhere (app/oauth/metadata_documents.py).
"""

from __future__ import annotations

import json
import re

MAX_JSON_DEPTH = 64
TOO_DEEP = f"is nested more than {MAX_JSON_DEPTH} levels deep"
LONE_SURROGATE = "has a \\u escape of half a UTF-16 surrogate pair (\\ud800-\\udfff), not text"

# A string (an unterminated one runs to the end: every match is linear) or one bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")
_QUOTE = ord('"')
# Any surrogate escape; also an escaped backslash before "ud800", which the parse clears.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `body`, read as JSON, opens more than `limit` arrays or objects at once."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for match in _TOKENS.finditer(body):
        first = match.group()[0]
        if first == _QUOTE:
            continue
        if first in _OPENING:
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(0, depth - 1)
    return False


def has_lone_surrogate(body: bytes) -> bool:
    """Whether `body`, a JSON document no deeper than the limit, has a string (or key)
    with an unpaired surrogate. Parsed only when an escape of one appears at all."""
    if _SURROGATE_ESCAPE.search(body) is None:
        return False
    try:
        document = json.loads(body)
    except ValueError:
        return False  # not JSON: whoever reads it answers that
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_problem(body: bytes) -> str | None:
    """Why `body` must be refused although json.loads may take it, as a predicate ("The
    JSON body " + it), or None."""
    if too_deep(body):
        return TOO_DEEP
    if has_lone_surrogate(body):
        return LONE_SURROGATE
    return None
