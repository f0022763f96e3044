-- RESERVE_BATCH (after prune.lua and buckets.lua): admission of a batch of n calls of
-- cost 1 (the batch endpoints, one Redis call for all): the items are admitted in order,
-- each as reserve.lua would (its rate tokens, then its credit), and the first refused
-- item ends it: the rest are refused for the same reason. The batch as a whole takes one
-- concurrency slot (it runs as one task on one worker): with the account's calls in
-- flight at the limit nothing is admitted. Each admitted item holds its own reservation
-- (`<id prefix>:<i>`, i from 1), so credits and calls in flight count per item.
-- Same KEYS as reserve.lua; ARGV as reserve.lua with n in place of the cost.
-- Returns {status of the first refused item (1: none refused), admitted, used,
--          in_flight, ms until a token (rate refusals), key tokens left, account tokens left}.
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
