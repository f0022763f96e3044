-- RECONCILE. KEYS: counter. ARGV: ledger total, persistent excess, the snapshot time it
-- was measured against, counter ttl s. Returns {used before (-1: no counter), used after}.
-- The excess is only taken off if that snapshot is still the one in the hash (a flush or
-- a concurrent run replaced it otherwise), and the snapshot is consumed, so two runs can
-- never take the same excess off twice. The result never goes below the ledger total.
-- Commits made meanwhile are kept: the decrement is relative, not a blind SET.
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
