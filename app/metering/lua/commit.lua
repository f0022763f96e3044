-- COMMIT (after prune.lua and claim_alert.lua). KEYS: counter, reservations[, once].
-- ARGV: reservation id, credits, counter ttl s, warning threshold, quota[, once ttl s].
-- Returns {reservation was live 1|0, used, alert, counted 1|0}. Counts the credits
-- either way, except when KEYS[3] (the call's retry key, `app.metering.retries`) is
-- already set: the same request was committed before, by an attempt the proxy then
-- retried, so this one closes its reservation and counts nothing.
local live = redis.call('ZREM', KEYS[2], ARGV[1])
if KEYS[3] and not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'EX', tonumber(ARGV[6])) then
  return {live, tonumber(redis.call('HGET', KEYS[1], 'used') or 0), 0, 0}
end
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return {live, used, claim_alert(used, tonumber(ARGV[4]), tonumber(ARGV[5])), 1}
