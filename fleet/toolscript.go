package fleet

import "github.com/redis/rueidis"

// toolLua applies one event to a shared tool breaker (SEMANTICS §1),
// atomically, on the store's clock. KEYS[1] is the breaker's hash. ARGV:
// op (allow, success, failure, timeout, cancel, sync, reset), threshold,
// cooldown (µs), lease (µs), channel, the permit's probe flag, generation and
// issue time (µs; a probe: its grant), (tests only, else empty) a virtual
// time replacing TIME, and the trip flag: 1 when the process's
// failure-rate window tripped on this verdict (SEMANTICS §8.1, §8.2; the
// window is kept per process, docs/FLEET.md), so that after a success or a
// counted failure a closed breaker trips as on the threshold (a success's
// trip dated now). A failure is dated now; a timeout at its permit's
// issue, a probe's timeout at the earlier of now and its lease end; the last
// failure never moves back.
//
// Hash fields: ep epoch (the store's TIME in µs when the state was created; a
// store restarted empty makes a new one, so tokens of the old epoch are
// stale), v version (bumped on every published change), m mode (0 closed,
// 1 open, 2 half-open with a probe in flight, 3 half-open with the slot free),
// g generation (bumped on every state change, on the first failure after a
// clean state and on a success that resets the count: the start order of
// calls), f consecutive failures, lf last failure (µs, -1 none), ps probe
// start (µs), sg the generation of the latest-started counted success
// (failures of calls started before it are stale).
//
// The generation starts at the epoch (µs) and grows by at most a few per
// script call, far slower than the store's clock, so generations grow across
// incarnations too: a permit's generation alone orders it and fences it. The
// probe's fencing token is the generation of its grant (a grant starts a new
// generation, and nothing else changes it until the probe's slot is left);
// tokens of an older incarnation are below every current generation.
//
// Reply: {ep, v, m, g, f, lf, ps, now, granted, probe, wait}.
const toolLua = `
local key = KEYS[1]
local op = ARGV[1]
local th = tonumber(ARGV[2])
local rec = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local ch = ARGV[5]
local pprobe = tonumber(ARGV[6])
local pg = tonumber(ARGV[7])
local trip = ARGV[10] == '1'
local now
if ARGV[9] ~= nil and ARGV[9] ~= '' then
  now = tonumber(ARGV[9]) -- tests only: a virtual store clock
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function S(x) return string.format('%d', x) end
local s = redis.call('HMGET', key, 'ep', 'v', 'm', 'g', 'f', 'lf', 'ps', 'sg')
local ep, v, m, g, f, lf, ps, sg
local dirty = false
if not s[1] then
  ep, v, m, g, f, lf, ps, sg = now, 0, 0, now, 0, -1, 0, 0
  dirty = true
else
  ep, v, m, g = tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), tonumber(s[4])
  f, lf, ps, sg = tonumber(s[5]), tonumber(s[6]), tonumber(s[7]), tonumber(s[8])
end
local function setmode(x) m = x; g = g + 1; dirty = true end
if m == 2 and now >= ps + lease then
  lf = ps + lease; ps = 0; setmode(1)
end
local granted, probe, wait = 0, 0, 0
if op == 'allow' then
  if m == 0 then
    granted = 1
  elseif m == 1 and now < lf + rec then
    wait = lf + rec - now
  elseif m == 1 or m == 3 then
    ps = now; setmode(2); granted = 1; probe = 1
  else
    wait = ps + lease - now
  end
elseif op == 'success' then
  if m == 0 then
    if f > 0 then
      f = 0; g = g + 1; dirty = true
      if pg > sg then sg = pg end
    end
    if trip then
      if now > lf then lf = now end
      setmode(1)
    end
  elseif m == 2 and pprobe == 1 and pg == g then
    f = 0; ps = 0; setmode(0)
    if pg > sg then sg = pg end
  end
elseif op == 'failure' or op == 'timeout' then
  if pg >= sg then
    local at = now
    if op == 'timeout' then
      at = tonumber(ARGV[8])
      if pprobe == 1 then at = at + lease end
      if at > now then at = now end
    end
    if m == 0 and f == 0 then g = g + 1 end
    f = f + 1; dirty = true
    if at > lf then lf = at end
    if m == 0 then
      if f >= th or trip then setmode(1) end
    elseif m == 2 or m == 3 then
      ps = 0; setmode(1)
    end
  end
elseif op == 'cancel' then
  if m == 2 and pprobe == 1 and pg == g then
    ps = 0; setmode(3)
  end
elseif op == 'reset' then
  f = 0; lf = -1; ps = 0; setmode(0)
end
if dirty then
  v = v + 1
  redis.call('HSET', key, 'ep', S(ep), 'v', S(v), 'm', S(m), 'g', S(g), 'f', S(f),
    'lf', S(lf), 'ps', S(ps), 'sg', S(sg))
  redis.call('PUBLISH', ch, S(ep)..' '..S(v)..' '..S(m)..' '..S(g)..' '..S(f)..' '..S(lf)..' '..S(ps))
end
return {ep, v, m, g, f, lf, ps, now, granted, probe, wait}
`

// toolScript is loaded once per store (EVALSHA, then EVAL after NOSCRIPT).
var toolScript = rueidis.NewLuaScript(toolLua)
