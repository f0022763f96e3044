-- COMMIT_MANY (after prune.lua and claim_alert.lua). KEYS: counter, reservations[, once].
-- ARGV: credits per reservation, counter ttl s, warning threshold, quota[, once ttl s],
-- reservation ids. Commits several reservations at once (a batch's items that returned
-- data); counts them all, like commit.lua. Returns {reservations that were live, used,
-- alert}. With KEYS[3] (on a cluster, keyed by the batch's first reservation) a second
-- run of the same commit (redis-py's cluster pipeline sends again what a failover left
-- unanswered) closes the reservations and counts nothing.
local first = 5
if KEYS[3] then
  first = 6
  if not redis.call('SET', KEYS[3], '1', 'NX', 'EX', tonumber(ARGV[5])) then
    local live = redis.call('ZREM', KEYS[2], unpack(ARGV, first))
    return {live, tonumber(redis.call('HGET', KEYS[1], 'used') or 0), 0}
  end
end
local live = redis.call('ZREM', KEYS[2], unpack(ARGV, first))
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[1]) * (#ARGV - first + 1))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {live, used, claim_alert(used, tonumber(ARGV[3]), tonumber(ARGV[4]))}
