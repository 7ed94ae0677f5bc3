package fleet

import "github.com/redis/rueidis"

// offLua writes one pool member's disable or enable (docs/FLEET.md),
// atomically, on the store's clock. KEYS[1] is the member's key (present
// while it is disabled), KEYS[2] its version key (the last write's
// version, kept after an enable so that versions keep rising). ARGV: (tests
// only, else empty) a virtual time replacing TIME, the op ("d" disable, "e"
// enable), the TTL (µs; 0: until enabled), the disable's tail
// ("<len(by)> <by><reason>") and the member's channel.
//
// The version is the store's time in µs, raised past the last one: it
// orders the change messages and the replies that reach a mirror in any
// order, and keeps rising across a store restarted empty. A disable with a
// TTL ends at now + TTL, and its key expires then (PX, rounded up to the
// millisecond). The key's value is the change message "d <v> <until>
// <tail>", published as is; an enable publishes "e <v>".
//
// Reply: {now, v, until}.
const offLua = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1]) -- tests only: a virtual store clock
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function S(x) return string.format('%d', x) end
local v = math.max(now, (tonumber(redis.call('GET', KEYS[2]) or '0') or 0) + 1)
redis.call('SET', KEYS[2], S(v))
local untilv = 0
local msg
if ARGV[2] == 'd' then
  local ttl = tonumber(ARGV[3])
  if ttl > 0 then untilv = now + ttl end
  msg = 'd ' .. S(v) .. ' ' .. S(untilv) .. ' ' .. ARGV[4]
  if ttl > 0 then
    redis.call('SET', KEYS[1], msg, 'PX', S(math.ceil(ttl / 1000)))
  else
    redis.call('SET', KEYS[1], msg)
  end
else
  redis.call('DEL', KEYS[1])
  msg = 'e ' .. S(v)
end
redis.call('PUBLISH', ARGV[5], msg)
return {now, v, untilv}
`

var offScript = rueidis.NewLuaScript(offLua)
