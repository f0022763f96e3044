"""Bulk pace: each account's jobs share a token bucket of rows per second by plan
(`free_job_rows_per_s`, `standard_job_rows_per_s`), apart from the interactive rate
buckets, so a job is never throttled row by row and never spends an interactive call's
tokens. A chunk takes its rows' tokens before it runs, or learns how long to wait."""

from __future__ import annotations

from app.kit.config import get_settings
from app.kit.redis_client import LuaScript, sync_redis
from app.plans import Plan

# KEYS: bucket. ARGV: rows, rate (rows/s), burst. A hash {t, ts ms}, created full.
# Returns 0 (tokens taken) or the ms until the bucket holds `rows`.
TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local need, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = burst
if b[1] then
  tokens = math.min(burst, tonumber(b[1]) + math.max(0, now - tonumber(b[2])) * rate / 1000)
end
if tokens < need then return math.ceil((need - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 't', tokens - need, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return 0
"""
take_script = LuaScript(TAKE)


def rows_per_s(plan: Plan) -> float:
    settings = get_settings()
    if plan is Plan.STANDARD:
        return settings.standard_job_rows_per_s
    return settings.free_job_rows_per_s


def bucket_key(user_id: str) -> str:
    return f"{get_settings().redis_key_prefix}jobpace:{{{user_id}}}"


def take(user_id: str, plan: Plan, rows: int) -> float:
    """Take `rows` tokens: 0.0, or the seconds to wait before asking again."""
    rate = rows_per_s(plan)
    # A whole chunk must fit in the bucket, and a second's worth may come at once.
    burst = max(float(get_settings().job_chunk_rows), rate)
    wait_ms = int(take_script.run(sync_redis(), [bucket_key(user_id)], [rows, rate, burst]))
    return wait_ms / 1000
