-- RELEASE (after prune.lua). KEYS: counter, reservations. ARGV: reservation id.
-- Returns 1 if it was live.
return redis.call('ZREM', KEYS[2], ARGV[1])
