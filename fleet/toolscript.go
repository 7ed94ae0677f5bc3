package fleet

import "github.com/redis/rueidis"

// toolLua applies one event to a shared tool breaker (SEMANTICS §1, §9.1,
// §9.3.1), atomically, on the store's clock. KEYS[1] is the breaker's hash.
// ARGV: op (allow, success, failure, timeout, cancel, sync, reset,
// ratelimited, quota), threshold, cooldown (µs), lease (µs), channel, the
// permit's probe flag, generation and issue time (µs; a probe: its grant),
// (tests only, else empty) a virtual time replacing TIME, the trip flag: 1
// when the process's failure-rate window tripped on this verdict (SEMANTICS
// §8.1, §8.2; the window is kept per process, docs/FLEET.md), so that after a
// success or a counted failure a closed breaker trips as on the threshold (a
// success's trip dated now); then the backoff factor, MaxRecoveryTimeout
// (µs), QuotaCooldown (µs) and, for ratelimited and quota, the time left
// until the hint (µs; empty: none, a quota then waits QuotaCooldown), and
// the slow flag: 1 when a success is the probe's and came slower than
// SlowCallAfter, so that the current probe's success re-opens instead of
// closing (SEMANTICS §9.2; another permit's success is what it was). A
// failure is dated now; a timeout at its permit's issue, a probe's timeout
// at the earlier of now and its lease end; the last failure never moves back.
//
// Hash fields: ep epoch (the store's TIME in µs when the state was created; a
// store restarted empty makes a new one, so tokens of the old epoch are
// stale), v version (bumped on every published change), m mode (0 closed,
// 1 open, 2 half-open with a probe in flight, 3 half-open with the slot free),
// g generation (bumped on every state change, on the first failure after a
// clean state and on a success that resets the count: the start order of
// calls), f consecutive failures, lf last failure (µs, -1 none), ps probe
// start (µs), sg the generation of the latest-started counted success
// (failures of calls started before it are stale); and for §9.1 and §9.3.1:
// n the trip count, ca when the breaker last closed (µs), bu the end of the
// cooldown c(n) from the last failure and hu the end a hint or a quota set
// (µs, -1 none; an open breaker may grant a probe from max(bu, hu) on), hc
// what set hu (1 a hint, 2 a quota); pl the lease the probe in flight was
// granted (µs: a new lease argument applies from the next probe). Every trip and re-trip raises n, first
// resetting it to 0 on a trip from closed when the breaker had been closed
// for MaxRecoveryTimeout (on the store's clock); a rate-limit or quota
// opening does not.
//
// The generation starts at the epoch (µs) and grows by at most a few per
// script call, far slower than the store's clock, so generations grow across
// incarnations too: a permit's generation alone orders it and fences it. The
// probe's fencing token is the generation of its grant (a grant starts a new
// generation, and nothing else changes it until the probe's slot is left);
// tokens of an older incarnation are below every current generation.
//
// Reply: {ep, v, m, g, f, lf, ps, now, granted, probe, wait, n, ca, bu, hu,
// hc, pl}; a notification carries "ep v m g f lf ps n ca bu hu hc pl".
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
local fct = tonumber(ARGV[11]) or 1
local maxr = tonumber(ARGV[12]) or rec * 10
local quota = tonumber(ARGV[13]) or 600000000
local hint = tonumber(ARGV[14] or '')
local slow = ARGV[15] == '1'
local now
if ARGV[9] ~= nil and ARGV[9] ~= '' then
  now = tonumber(ARGV[9]) -- tests only: a virtual store clock
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function S(x) return string.format('%d', x) end
local s = redis.call('HMGET', key, 'ep', 'v', 'm', 'g', 'f', 'lf', 'ps', 'sg', 'n', 'ca', 'bu', 'hu', 'hc', 'pl')
local ep, v, m, g, f, lf, ps, sg, n, ca, bu, hu, hc, pl
local dirty = false
if not s[1] then
  ep, v, m, g, f, lf, ps, sg = now, 0, 0, now, 0, -1, 0, 0
  n, ca, bu, hu, hc, pl = 0, now, -1, -1, 0, lease
  dirty = true
else
  ep, v, m, g = tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), tonumber(s[4])
  f, lf, ps, sg = tonumber(s[5]), tonumber(s[6]), tonumber(s[7]), tonumber(s[8])
  n, ca, hu, hc = tonumber(s[9]) or 0, tonumber(s[10]) or ep, tonumber(s[12]) or -1, tonumber(s[13]) or 0
  bu = tonumber(s[11]) or (lf + rec)
  pl = tonumber(s[14]) or lease
end
local function setmode(x) m = x; g = g + 1; dirty = true end
local function cool(k)
  if k <= 1 or fct <= 1 then return rec end
  local c = rec * fct ^ (k - 1)
  if c >= maxr then return maxr end
  return math.floor(c)
end
local function tripit()
  if m == 0 and now - ca >= maxr then n = 0 end
  if n < 2147483647 then n = n + 1 end
  bu = lf + cool(n); hu = -1; hc = 0
  ps = 0; setmode(1)
end
if m == 2 and now >= ps + pl then
  lf = ps + pl; tripit()
end
local ou = bu
if hu > ou then ou = hu end
local granted, probe, wait = 0, 0, 0
if op == 'allow' then
  if m == 0 then
    granted = 1
  elseif m == 1 and now < ou then
    wait = ou - now
  elseif m == 1 or m == 3 then
    ps = now; pl = lease; setmode(2); granted = 1; probe = 1
  else
    wait = ps + pl - now
  end
elseif op == 'success' then
  if m == 0 then
    if f > 0 then
      f = 0; g = g + 1; dirty = true
      if pg > sg then sg = pg end
    end
    if trip then
      if now > lf then lf = now end
      tripit()
    end
  elseif m == 2 and pprobe == 1 and pg == g and slow then
    if f == 0 then g = g + 1 end -- a slow probe fails (a failure for the breaker only)
    f = f + 1; dirty = true
    if now > lf then lf = now end
    tripit()
  elseif m == 2 and pprobe == 1 and pg == g then
    f = 0; ps = 0; ca = now; setmode(0)
    if pg > sg then sg = pg end
  end
elseif op == 'failure' or op == 'timeout' then
  if pg >= sg then
    local at = now
    if op == 'timeout' then
      at = tonumber(ARGV[8])
      if pprobe == 1 then at = at + pl end
      if at > now then at = now end
    end
    if m == 0 and f == 0 then g = g + 1 end
    f = f + 1; dirty = true
    if at > lf then lf = at end
    if m == 0 then
      if f >= th or trip then tripit() end
    elseif m == 2 or m == 3 then
      tripit()
    else
      local k = n
      if k < 1 then k = 1 end
      if lf + cool(k) > bu then bu = lf + cool(k) end
    end
  end
elseif op == 'ratelimited' or op == 'quota' then
  if m == 0 and f == 0 then g = g + 1 end
  f = f + 1; dirty = true
  if now > lf then lf = now end
  local u, c = -1, 1
  if hint ~= nil then u = now + hint end
  if op == 'quota' then
    c = 2
    if hint == nil then u = now + quota end
  end
  if m ~= 1 then
    if m == 0 and now - ca >= maxr then n = 0 end
    bu = -1; hu = -1; ps = 0; setmode(1)
  end
  if u > hu then hu = u; hc = c end
elseif op == 'cancel' then
  if m == 2 and pprobe == 1 and pg == g then
    ps = 0; setmode(3)
  end
elseif op == 'reset' then
  f = 0; lf = -1; ps = 0; n = 0; ca = now; bu = -1; hu = -1; hc = 0; setmode(0)
  sg = g -- calls granted before the reset are old news: their failures are stale
end
if dirty then
  v = v + 1
  redis.call('HSET', key, 'ep', S(ep), 'v', S(v), 'm', S(m), 'g', S(g), 'f', S(f),
    'lf', S(lf), 'ps', S(ps), 'sg', S(sg), 'n', S(n), 'ca', S(ca), 'bu', S(bu), 'hu', S(hu), 'hc', S(hc), 'pl', S(pl))
  redis.call('PUBLISH', ch, S(ep)..' '..S(v)..' '..S(m)..' '..S(g)..' '..S(f)..' '..S(lf)..' '..S(ps)..' '..
    S(n)..' '..S(ca)..' '..S(bu)..' '..S(hu)..' '..S(hc)..' '..S(pl))
end
return {ep, v, m, g, f, lf, ps, now, granted, probe, wait, n, ca, bu, hu, hc, pl}
`

// toolScript is loaded once per store (EVALSHA, then EVAL after NOSCRIPT).
var toolScript = rueidis.NewLuaScript(toolLua)
