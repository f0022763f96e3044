-- RELEASE_MANY (after prune.lua). KEYS: counter, reservations. ARGV: reservation ids.
-- Returns how many were live.
return redis.call('ZREM', KEYS[2], unpack(ARGV))
