"""A dashboard upload held between its preview and its Start: the CSV stays on the server
(Redis, `UPLOAD_TTL_S`), the page carries only a random token. One per account: a new
upload replaces the last, so an account holds at most one CSV's bytes here. Taking it
deletes it, so a double-clicked Start starts one job."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from app.kit.config import get_settings
from app.kit.redis_client import LuaScript, sync_redis_bytes

UPLOAD_TTL_S = 15 * 60
# KEYS: the upload. ARGV: the token. Returns {tool, data} and deletes it, or nil.
TAKE = """
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return nil end
local held = redis.call('HMGET', KEYS[1], 'tool', 'data')
redis.call('DEL', KEYS[1])
return held
"""
take_script = LuaScript(TAKE)


@dataclass(frozen=True)
class StagedUpload:
    tool: str
    data: bytes


def _key(user_id: str) -> str:
    return f"{get_settings().redis_key_prefix}jobupload:{{{user_id}}}"


def stage_upload(user_id: str, tool: str, data: bytes) -> str:
    """Keep the upload; returns the token its Start form posts back."""
    token = secrets.token_urlsafe(24)
    pipe = sync_redis_bytes().pipeline(transaction=True)
    pipe.delete(_key(user_id))
    pipe.hset(_key(user_id), mapping={"token": token, "tool": tool, "data": data})
    pipe.expire(_key(user_id), UPLOAD_TTL_S)
    pipe.execute()
    return token


def take_upload(user_id: str, token: str) -> StagedUpload | None:
    """The upload the token names, removed; None when it expired, was replaced by a newer
    upload or was started already (a newer upload stays)."""
    taken = take_script.run(sync_redis_bytes(), [_key(user_id)], [token])
    if not taken:
        return None
    tool, data = taken
    return StagedUpload(tool.decode(), data)
