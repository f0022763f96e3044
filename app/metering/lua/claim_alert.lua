-- Usage alerts are decided at the commit, where `used` is exact: the commit that takes
-- `used` to the quota, or else to the warning threshold, claims that alert with HSETNX on
-- a field of the counter named by the threshold ("alert:w:800", "alert:q:1000"), so one
-- call of the period gets it: alert 2 (quota) or 1 (warning), else 0. Reaching the quota
-- also claims the warning (none after the quota mail). Below the threshold: one
-- comparison. A quota of 0: no alerts.
local function claim_alert(used, warning, quota)
  if quota <= 0 or used < warning then return 0 end
  if used >= quota then
    redis.call('HSETNX', KEYS[1], 'alert:w:' .. warning, 1)
    if redis.call('HSETNX', KEYS[1], 'alert:q:' .. quota, 1) == 1 then return 2 end
    return 0
  end
  if redis.call('HSETNX', KEYS[1], 'alert:w:' .. warning, 1) == 1 then return 1 end
  return 0
end
