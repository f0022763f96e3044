"""The Lua scripts behind reserve, commit, release and reconciliation: one call each.

`RESERVE` is the whole admission of a call (rate buckets, concurrency, credits) in one
round trip; each refusal says which limit it was.

Reservations live in a per-account sorted set, scored by their expiry in Redis server time
(`TIME`, so api processes with skewed clocks agree). Every script first removes expired
reservations, so an abandoned reservation (its process died between reserve and
commit/release) stops holding credit and its concurrency slot within `reservation_ttl_s`
without any sweeper: the
next script call on that account prunes it, and a reserve is such a call. The set itself
expires with its newest reservation, so nothing is left behind.
"""

from __future__ import annotations

from app.redis_client import LuaScript

_PRUNE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
"""

# The two token buckets of RESERVE and RESERVE_BATCH (after _PRUNE, which sets `now`): a
# bucket is a hash {t: tokens, ts: ms of the last update}, created full. `level`: its
# tokens now; `wait_ms`: ms until it holds `need`; `store`: write it back, expiring once
# it would be full again (+1 s). ARGV 7-10: key rate (tokens/s), key burst, account rate,
# account burst.
_BUCKETS = """
local function level(key, rate, burst)
  local b = redis.call('HMGET', key, 't', 'ts')
  local tokens, ts = tonumber(b[1]), tonumber(b[2])
  if not tokens then return burst end
  return math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
end
local function wait_ms(tokens, need, rate)
  return math.ceil((need - tokens) * 1000 / rate)
end
local function store(key, tokens, rate, burst)
  redis.call('HSET', key, 't', tokens, 'ts', now)
  redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
end
local key_rate, key_burst = tonumber(ARGV[7]), tonumber(ARGV[8])
local acct_rate, acct_burst = tonumber(ARGV[9]), tonumber(ARGV[10])
"""

# Admission of one call, in the order a refusal is decided:
#   1. the counter, when needed, must exist (else {-1}: the caller seeds it from the
#      ledger with `SEED` and asks again, so a flushed Redis never decides on an empty one);
#   2. the key's and the account's token buckets must each hold `cost` tokens (else
#      {2 key | 3 account, used, in_flight, ms until enough tokens});
#   3. the account's calls in flight (its live reservations) must be under the
#      concurrency limit (else {4, ...});
#   4. with a credit limit enforced, used + in flight must be under it (else {0, ...}).
# Tokens are taken once the buckets allow the call (step 2), so calls refused for
# concurrency or credits still count against the rate. Granted: {1, used, in_flight, 0,
# whole tokens left in the key's bucket, in the account's} (for the RateLimit header).
# A bucket is a hash {t: tokens, ts: ms of the last update}, created full.
# KEYS: counter, reservations, key bucket, account bucket.
# ARGV: reservation id, ttl ms, credit limit, enforce (1|0), need counter (1|0), cost,
#       key rate (tokens/s), key burst, account rate, account burst, concurrency.
# RESERVE's first answer.
GRANTED, OVER_CREDITS, NEEDS_COUNTER, KEY_RATE, ACCOUNT_RATE, CONCURRENCY = 1, 0, -1, 2, 3, 4
RESERVE = (
    _PRUNE
    + _BUCKETS
    + """
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1, 0, 0, 0}
end
local used = tonumber(redis.call('HGET', KEYS[1], 'used') or '0')
local in_flight = redis.call('ZCARD', KEYS[2])
local cost = tonumber(ARGV[6])
local key_tokens = level(KEYS[3], key_rate, key_burst)
if key_tokens < cost then
  return {2, used, in_flight, wait_ms(key_tokens, cost, key_rate)}
end
local acct_tokens = level(KEYS[4], acct_rate, acct_burst)
if acct_tokens < cost then
  return {3, used, in_flight, wait_ms(acct_tokens, cost, acct_rate)}
end
store(KEYS[3], key_tokens - cost, key_rate, key_burst)
store(KEYS[4], acct_tokens - cost, acct_rate, acct_burst)
if in_flight >= tonumber(ARGV[11]) then
  return {4, used, in_flight, 0}
end
if ARGV[4] == '1' and used + in_flight >= tonumber(ARGV[3]) then
  return {0, used, in_flight, 0}
end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[2]) < ttl then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {1, used, in_flight + 1, 0, math.floor(key_tokens - cost), math.floor(acct_tokens - cost)}
"""
)

# Admission of a batch of n calls of cost 1 (the batch endpoints, one Redis call for all):
# the items are admitted in order, each as RESERVE would (its rate tokens, then its
# credit), and the first refused item ends it: the rest are refused for the same reason.
# The batch as a whole takes one concurrency slot (it runs as one task on one worker):
# with the account's calls in flight at the limit nothing is admitted. Each admitted item
# holds its own reservation (`<id prefix>:<i>`, i from 1), so credits and calls in flight
# count per item. Same KEYS as RESERVE; ARGV as RESERVE with n in place of the cost.
# Returns {status of the first refused item (1: none refused), admitted, used,
#          in_flight, ms until a token (rate refusals), key tokens left, account tokens left}.
RESERVE_BATCH = (
    _PRUNE
    + _BUCKETS
    + """
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1, 0, 0, 0, 0, 0, 0}
end
local used = tonumber(redis.call('HGET', KEYS[1], 'used') or '0')
local in_flight = redis.call('ZCARD', KEYS[2])
local n = tonumber(ARGV[6])
local key_tokens = level(KEYS[3], key_rate, key_burst)
local acct_tokens = level(KEYS[4], acct_rate, acct_burst)
local ttl = tonumber(ARGV[2])
local status, admitted, wait = 1, 0, 0
for i = 1, n do
  if key_tokens < 1 then
    status, wait = 2, wait_ms(key_tokens, 1, key_rate)
    break
  end
  if acct_tokens < 1 then
    status, wait = 3, wait_ms(acct_tokens, 1, acct_rate)
    break
  end
  key_tokens, acct_tokens = key_tokens - 1, acct_tokens - 1
  if i == 1 and in_flight >= tonumber(ARGV[11]) then
    status = 4
    break
  end
  if ARGV[4] == '1' and used + in_flight + admitted >= tonumber(ARGV[3]) then
    status = 0
    break
  end
  admitted = admitted + 1
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[1] .. ':' .. i)
end
store(KEYS[3], key_tokens, key_rate, key_burst)
store(KEYS[4], acct_tokens, acct_rate, acct_burst)
if admitted > 0 and redis.call('PTTL', KEYS[2]) < ttl then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {status, admitted, used, in_flight + admitted, wait,
        math.floor(key_tokens), math.floor(acct_tokens)}
"""
)


# KEYS: counter, reservations. ARGV: reservation ids. Returns how many were live.
RELEASE_MANY = (
    _PRUNE
    + """
return redis.call('ZREM', KEYS[2], unpack(ARGV))
"""
)

# Usage alerts are decided at the commit, where `used` is exact: the commit that takes
# `used` to the quota, or else to the warning threshold, claims that alert with HSETNX on a
# field of the counter named by the threshold ("alert:w:800", "alert:q:1000"), so one call
# of the period gets it: alert 2 (quota) or 1 (warning), else 0. Reaching the quota also
# claims the warning (none after the quota mail). Below the threshold: one comparison.
# A quota of 0: no alerts.
ALERT_NONE, ALERT_WARNING, ALERT_QUOTA = 0, 1, 2
_CLAIM_ALERT = """
local function claim_alert(used, warning, quota)
  if quota <= 0 or used < warning then return 0 end
  if used >= quota then
    redis.call('HSETNX', KEYS[1], 'alert:w:' .. warning, 1)
    if redis.call('HSETNX', KEYS[1], 'alert:q:' .. quota, 1) == 1 then return 2 end
    return 0
  end
  if redis.call('HSETNX', KEYS[1], 'alert:w:' .. warning, 1) == 1 then return 1 end
  return 0
end
"""

# KEYS: counter, reservations[, once]. ARGV: reservation id, credits, counter ttl s,
# warning threshold, quota[, once ttl s]. Returns {reservation was live 1|0, used, alert,
# counted 1|0}. Counts the credits either way, except when KEYS[3] (the call's retry key,
# `app.metering.retries`) is already set: the same request was committed before, by an
# attempt the proxy then retried, so this one closes its reservation and counts nothing.
COMMIT = (
    _PRUNE
    + _CLAIM_ALERT
    + """
local live = redis.call('ZREM', KEYS[2], ARGV[1])
if KEYS[3] and not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'EX', tonumber(ARGV[6])) then
  return {live, tonumber(redis.call('HGET', KEYS[1], 'used') or 0), 0, 0}
end
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return {live, used, claim_alert(used, tonumber(ARGV[4]), tonumber(ARGV[5])), 1}
"""
)

# KEYS: counter, reservations. ARGV: credits per reservation, counter ttl s, warning
# threshold, quota, reservation ids. Commits several reservations at once (a batch's
# items that returned data); counts them all, like COMMIT. Returns {reservations that
# were live, used, alert}.
COMMIT_MANY = (
    _PRUNE
    + _CLAIM_ALERT
    + """
local live = redis.call('ZREM', KEYS[2], unpack(ARGV, 5))
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[1]) * (#ARGV - 4))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {live, used, claim_alert(used, tonumber(ARGV[3]), tonumber(ARGV[4]))}
"""
)

# KEYS: counter, reservations. ARGV: reservation id. Returns 1 if it was live.
RELEASE = (
    _PRUNE
    + """
return redis.call('ZREM', KEYS[2], ARGV[1])
"""
)

# KEYS: counter. ARGV: ledger total, persistent excess, the snapshot time it was measured
# against, counter ttl s. Returns {used before (-1: no counter), used after}.
# The excess is only taken off if that snapshot is still the one in the hash (a flush or
# a concurrent run replaced it otherwise), and the snapshot is consumed, so two runs can
# never take the same excess off twice. The result never goes below the ledger total.
# Commits made meanwhile are kept: the decrement is relative, not a blind SET.
RECONCILE = """
local ledger = tonumber(ARGV[1])
local raw = redis.call('HGET', KEYS[1], 'used')
if not raw then
  if ledger == 0 then return {-1, 0} end
  redis.call('HSET', KEYS[1], 'used', ledger)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
  return {-1, ledger}
end
local before = tonumber(raw)
local after = before
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], 'snap_at') == ARGV[3] then
  after = before - tonumber(ARGV[2])
  redis.call('HDEL', KEYS[1], 'snap_used', 'snap_at')
end
if after < ledger then after = ledger end
if after ~= before then
  redis.call('HSET', KEYS[1], 'used', after)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
end
return {before, after}
"""

# KEYS: counter. ARGV: ledger total, counter ttl s. Creates a missing counter from the
# ledger; a counter that exists meanwhile (a concurrent seed or commit) is kept.
# Returns the counter's used.
SEED = """
if redis.call('HSETNX', KEYS[1], 'used', tonumber(ARGV[1])) == 1 then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return tonumber(redis.call('HGET', KEYS[1], 'used'))
"""

# KEYS: counter. ARGV: snapshot time. Records (used, time) for the next reconciliation.
SNAPSHOT = """
local used = redis.call('HGET', KEYS[1], 'used')
if not used then return 0 end
redis.call('HSET', KEYS[1], 'snap_used', used, 'snap_at', ARGV[1])
return 1
"""


reserve_script = LuaScript(RESERVE)
reserve_batch_script = LuaScript(RESERVE_BATCH)
commit_many_script = LuaScript(COMMIT_MANY)
release_many_script = LuaScript(RELEASE_MANY)
seed_script = LuaScript(SEED)
commit_script = LuaScript(COMMIT)
release_script = LuaScript(RELEASE)
reconcile_script = LuaScript(RECONCILE)
snapshot_script = LuaScript(SNAPSHOT)
