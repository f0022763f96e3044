-- RESERVE (after prune.lua and buckets.lua): admission of one call, in the order a
-- refusal is decided:
--   1. the counter, when needed, must exist (else {-1}: the caller seeds it from the
--      ledger with seed.lua and asks again, so a flushed Redis never decides on an empty one);
--   2. the key's and the account's token buckets must each hold `cost` tokens (else
--      {2 key | 3 account, used, in_flight, ms until enough tokens});
--   3. the account's calls in flight (its live reservations) must be under the
--      concurrency limit (else {4, ...});
--   4. with a credit limit enforced, used + in flight must be under it (else {0, ...}).
-- Tokens are taken once the buckets allow the call (step 2), so calls refused for
-- concurrency or credits still count against the rate. Granted: {1, used, in_flight, 0,
-- whole tokens left in the key's bucket, in the account's} (for the RateLimit header).
-- KEYS: counter, reservations, key bucket, account bucket.
-- ARGV: reservation id, ttl ms, credit limit, enforce (1|0), need counter (1|0), cost,
--       key rate (tokens/s), key burst, account rate, account burst, concurrency.
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
