"""Stripe's wire format, for the fake Stripe: ids, form decoding (bracket notation),
errors, event envelopes and webhook signatures."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl

from starlette.responses import JSONResponse, Response

WEBHOOK_SECRET = "whsec_fake" + "1" * 24


def new_id(prefix: str, length: int = 24) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return prefix + "".join(secrets.choice(alphabet) for _ in range(length))


def decode_form(body: str) -> dict[str, Any]:
    """Stripe's bracket notation back into nested dicts and lists."""
    root: dict[str, Any] = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        parts = re.findall(r"[^\[\]]+", key)
        node: Any = root
        for part, following in zip(parts, parts[1:], strict=False):
            child: Any = [] if following.isdigit() else {}
            if isinstance(node, list):
                index = int(part)
                while len(node) <= index:
                    node.append(None)
                node[index] = node[index] if node[index] is not None else child
                node = node[index]
            else:
                node = node.setdefault(part, child)
        last = parts[-1]
        if isinstance(node, list):
            index = int(last)
            while len(node) <= index:
                node.append(None)
            node[index] = value
        else:
            node[last] = value
    return root


def stripe_error(status: int, message: str, *, param: str | None = None, **extra: Any) -> Response:
    error: dict[str, Any] = {"type": "invalid_request_error", "message": message, **extra}
    if param:
        error["param"] = param
    headers = {"Stripe-Should-Retry": "false"} if status < 500 else {}
    return JSONResponse({"error": error}, status, headers=headers)


def sign(payload: bytes, secret: str = WEBHOOK_SECRET, timestamp: int | None = None) -> str:
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def make_event(event_type: str, obj: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": new_id("evt_"),
        "object": "event",
        "api_version": "2025-09-30.clover",
        "created": int(time.time()),
        "data": {"object": json.loads(json.dumps(obj)), **extra},
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": event_type,
    }


def public(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if not k.startswith("_")}
