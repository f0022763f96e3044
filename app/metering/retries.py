"""A request the proxy sent twice is charged once.

nginx passes a GET on to the next api when the first fails after it was sent
(`proxy_next_upstream error timeout`, deploy/nginx.conf): stock nginx cannot limit that
to connect failures, so an api that committed a call and died before answering sees
its call run again on the other api. nginx gives each client request an id,
`$request_id`, that stays the same across those attempts and sends it as
`X-Proxy-Request-ID` (set, not passed on: a client cannot choose it through the proxy).

The call's retry key is a digest of that id, the account, the tool and its checked
arguments. The commit script sets it (`keys.once_key`, kept `ONCE_TTL_S`) and counts the
credit only when it was not set yet, and the usage event of a keyed call is named after
it, so the ledger (unique call ids) keeps one row. The retried attempt runs the tool again
and answers (the first answer died with its host), charged nothing more. The account is
in the key because the ledger's call ids are unique across all accounts: another account
sending the same id is charged, and its event must not be taken for this one's.

The api honours the header only from GEOSVC_FORWARDED_ALLOW_IPS (app/http/forwarded.py
drops it from anyone else), so a caller cannot choose the id, through the proxy or past
it. A different tool or argument is a different key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

HEADER = "x-proxy-request-id"
# Longer than nginx retries one request: at most 2 attempts (`proxy_next_upstream_tries`)
# of at most the read timeout (60 s) each.
ONCE_TTL_S = 300
_REQUEST_ID = re.compile(r"[0-9a-f]{32}")  # nginx's $request_id: 16 random bytes, hex


def retry_key(
    proxy_request_id: str | None, user_id: str, tool: str, arguments: Mapping[str, Any]
) -> str | None:
    """The call's retry key, or None without a well-formed proxy request id."""
    if proxy_request_id is None or _REQUEST_ID.fullmatch(proxy_request_id) is None:
        return None
    question = [proxy_request_id, user_id, tool, arguments]
    question_text = json.dumps(question, sort_keys=True, default=str)
    return hashlib.sha256(question_text.encode()).hexdigest()[:32]


def ledger_call_id(key: str) -> str:
    """The usage event's call id for a keyed call: the same for every attempt."""
    return "call_once_" + key
