-- SNAPSHOT. KEYS: counter. ARGV: snapshot time. Records (used, time) for the next
-- reconciliation.
local used = redis.call('HGET', KEYS[1], 'used')
if not used then return 0 end
redis.call('HSET', KEYS[1], 'snap_used', used, 'snap_at', ARGV[1])
return 1
