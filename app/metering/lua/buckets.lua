-- The two token buckets of reserve.lua and reserve_batch.lua (after prune.lua, which
-- sets `now`): a bucket is a hash {t: tokens, ts: ms of the last update}, created full.
-- `level`: its tokens now; `wait_ms`: ms until it holds `need`; `store`: write it back,
-- expiring once it would be full again (+1 s). ARGV 7-10: key rate (tokens/s), key
-- burst, account rate, account burst.
local function level(key, rate, burst)
  local b = redis.call('HMGET', key, 't', 'ts')
  local tokens, ts = tonumber(b[1]), tonumber(b[2])
  if not tokens then return burst end
  return math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
end
local function wait_ms(tokens, need, rate)
  return math.ceil((need - tokens) * 1000 / rate)
end
local function store(key, tokens, rate, burst)
  redis.call('HSET', key, 't', tokens, 'ts', now)
  redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
end
local key_rate, key_burst = tonumber(ARGV[7]), tonumber(ARGV[8])
local acct_rate, acct_burst = tonumber(ARGV[9]), tonumber(ARGV[10])
