-- The start of every script that touches reservations: `now` in Redis server time
-- (ms; TIME, so api processes with skewed clocks agree), and the account's expired
-- reservations (KEYS[2], scored by expiry) removed.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
