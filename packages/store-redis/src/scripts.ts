// The two Lua scripts behind redisLimits. Each runs atomically on the server and reads the server's
// own clock (TIME), so every process that shares the Redis shares one time line too.
//
// GCRA: per key, the time (ms, as a decimal string) at which the bucket is full again. A charge of
// n units moves it n × window / limit later, and fits while it stays within one window of now.
// KEYS: one per charge. ARGV: amount, limit, windowMs for each key, in order.

const NOW = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
`;

/** Returns {1} when every charge fitted and was taken; {0, index, retryAfterMs} when none was. */
export const CONSUME = `${NOW}
local arrivals = {}
local worst, worstIndex = 0, -1
for i = 1, #KEYS do
  local amount = tonumber(ARGV[3 * i - 2])
  local limit = tonumber(ARGV[3 * i - 1])
  local window = tonumber(ARGV[3 * i])
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if tat < now then tat = now end
  tat = tat + amount * window / limit
  local over = tat - now - window
  if over > 1e-6 and over > worst then
    worst = over
    worstIndex = i - 1
  end
  arrivals[i] = tat
end
if worstIndex >= 0 then
  return {0, worstIndex, math.ceil(worst)}
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.17g', arrivals[i]), 'PX', math.ceil(arrivals[i] - now))
end
return {1}
`;

/** Gives back each charge, never past a full bucket (a key whose bucket is full is deleted). */
export const REFUND = `${NOW}
for i = 1, #KEYS do
  local tat = tonumber(redis.call('GET', KEYS[i]) or '')
  if tat then
    local amount = tonumber(ARGV[3 * i - 2])
    local limit = tonumber(ARGV[3 * i - 1])
    local window = tonumber(ARGV[3 * i])
    tat = tat - amount * window / limit
    if tat <= now then
      redis.call('DEL', KEYS[i])
    else
      redis.call('SET', KEYS[i], string.format('%.17g', tat), 'PX', math.ceil(tat - now))
    end
  end
end
return 1
`;
