-- A bulk job's chunk charged once (app/metering/chunks.py).
-- KEYS: counter, reservations, marker. ARGV: rows with data, enforce (1|0), credit limit,
-- counter ttl s, marker ttl s, warning threshold, quota, period. Returns {charged, used
-- after, alert, 1 if charged before (the marker) else 0, the period charged}, or
-- {-1, ...} when a limit is enforced and the counter is missing (seed it from the ledger
-- and ask again, as admission does).
-- The marker is the job's and the chunk's, whatever the month: a run in a later month
-- reads the first run's charge and period back and counts nothing.
-- Calls in flight (live reservations) count against the limit, as in RESERVE.
local done = redis.call('GET', KEYS[3])
if done then
  local charged, period = string.match(done, '^(%d+) (.+)$')
  return {tonumber(charged), tonumber(redis.call('HGET', KEYS[1], 'used') or '0'), 0, 1, period}
end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1, 0, 0, 0, ARGV[8]}
end
local used = tonumber(redis.call('HGET', KEYS[1], 'used') or '0')
local n = tonumber(ARGV[1])
if ARGV[2] == '1' then
  local room = tonumber(ARGV[3]) - used - redis.call('ZCARD', KEYS[2])
  if room < n then n = math.max(0, room) end
end
local after, alert = used, 0
if n > 0 then
  after = redis.call('HINCRBY', KEYS[1], 'used', n)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
  alert = claim_alert(after, tonumber(ARGV[6]), tonumber(ARGV[7]))
end
redis.call('SET', KEYS[3], n .. ' ' .. ARGV[8], 'EX', tonumber(ARGV[5]))
return {n, after, alert, 0, ARGV[8]}
