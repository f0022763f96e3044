-- COMMIT_MANY (after prune.lua and claim_alert.lua). KEYS: counter, reservations.
-- ARGV: credits per reservation, counter ttl s, warning threshold, quota, reservation
-- ids. Commits several reservations at once (a batch's items that returned data); counts
-- them all, like commit.lua. Returns {reservations that were live, used, alert}.
local live = redis.call('ZREM', KEYS[2], unpack(ARGV, 5))
local used = redis.call('HINCRBY', KEYS[1], 'used', tonumber(ARGV[1]) * (#ARGV - 4))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {live, used, claim_alert(used, tonumber(ARGV[3]), tonumber(ARGV[4]))}
