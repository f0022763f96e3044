-- SEED. KEYS: counter. ARGV: ledger total, counter ttl s. Creates a missing counter from
-- the ledger; a counter that exists meanwhile (a concurrent seed or commit) is kept.
-- Returns the counter's used.
if redis.call('HSETNX', KEYS[1], 'used', tonumber(ARGV[1])) == 1 then
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return tonumber(redis.call('HGET', KEYS[1], 'used'))
