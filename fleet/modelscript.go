package fleet

import "github.com/redis/rueidis"

// modelLua applies one event to a shared model breaker (SEMANTICS §3),
// atomically, on the store's clock: the same machine as package fallback.
// KEYS[1] is the breaker's hash. ARGV: op (begin, success, failure, cancel,
// avail, reset, sync), trip threshold, successes needed, max fail count,
// cooldown (µs), lease (µs), chain length n, channel, the ticket's incarnation
// epoch, generation, chain-budget epoch, probe number and entry (-1: the
// primary), the failure kind (0 transient, 1 rate limit, 2 quota) or for
// avail the entry, the avail flag (for failure, 1: trip, a process's
// failure-rate window tripped, SEMANTICS §8.1), (tests only, else empty) a virtual time,
// and the quota cooldown (µs), the failure's hint (µs, 0 none), its
// timeout flag, the ticket's issue time (µs), the turn's probed flag, the
// models that failed the turn slowly (space-separated: 0 the primary, i+1
// chain entry i) and for hedge the entry to skip, then a time to
// live (µs from the store's now) and a reason, then the backoff factor
// (SEMANTICS §9.1; ≤ 1 off) and MaxRecoveryTimeout (µs). Ops: begin routes
// a turn with memory; hedge issues a ticket for the first usable chain entry
// that is not slow and not the skipped one (no cooldown step). Manual ops
// (SEMANTICS §8.5): hold (a trip whose cooldown ends at the later of now +
// ttl and the running one, cause 3 manual; the reason goes to the hash field
// hr), release (a hold in force ends now), disable (entry kind off until
// now + ttl, or for good with ttl 0; the reason goes to dr<kind>; avail
// clears it). A
// disable whose end has passed is enabled by the next call of any op. A
// held breaker (fallback, cause manual) with no chain refuses begin.
//
// The generation and the chain-budget epoch start at the incarnation's TIME
// (µs) and grow far slower than the clock, so they also tell incarnations
// apart: a ticket of a store that restarted empty never matches.
//
// State: ep incarnation (TIME at creation), v version, st (0 primary,
// 1 fallback, 2 recovering), g generation, ce chain-budget epoch, f failures,
// s probe successes, ta trip time (-1 none), act activated, pr probing, pst
// probe start, pq probe number, then n attempts and n disabled flags, then
// cg the generation of the latest state change or reset and pv the
// generation of the latest-issued ticket whose success on the primary was
// counted (stale failures: an older ticket's failure on the primary
// changes nothing). As in package fallback, g also moves on the first
// failure after a clean streak and on every counted success. Then
// cen the cooldown's end (0 none), cause (0 recovery timeout, 1 hint,
// 2 quota, 3 manual), sh the latest hint of the current streak and lf its
// latest failure time (0 none). A state of the width before cen (written by a process
// without quota cooldowns) is read with cen = ta + cooldown. The manual ops
// keep that width (an older process still reads the state during a rolling
// upgrade; it ignores what follows):
// the disables' ends (n µs, 0 until enabled) live in the hash field d, the
// reasons in hr and dr<i>. A change message is the state alone, or the
// state, a newline, the disables' ends, a newline and a note: the item the
// op gave a reason to (-1 the hold, i entry i), a space and the reason
// (empty after an op that gave none).
//
// The trip count n of SEMANTICS §9.1 and closedAt (µs: when the state last
// became primary) live in the hash field k ("n closedAt"; absent: 0 0), and
// a change message carries them as a fourth line after the note (a process
// that predates them reads that line as part of the note, which it shows
// only as a hold's or a disable's reason). An opening from primary
// first sets n to 0 when now − closedAt ≥ MaxRecoveryTimeout (a re-trip
// from recovering keeps n: the breaker has not closed since); a trip on the threshold
// (or a window's, flag 1), a probe failure that reaches the threshold, a
// lapsed lease that does, and a slow probe (failure with flag 1 on the
// probe's ticket, SEMANTICS §9.2: a re-trip at once) raise it; a quota
// alone, a rate-limited probe's immediate re-trip and a hold do not. The
// opening that makes n = k waits min(cooldown × f^(k−1), max) (cause 4,
// backoff, when k > 1 and f > 1), or a later hint or quota as before.
//
// An operator's act (ARGV[28]: hold, release, disable, enable with op
// avail, reset; empty for every other call) that changes the state is
// published first, on the same channel, as its own message: "act", the
// incarnation and the version of the state it made, the act, its end (µs:
// a hold's now + ttl, a disable's with a ttl; 0 none) and the reason
// (ARGV[25], which the caller bounds; it may hold spaces), so that every
// process names the act, its operator and its end in the transition the
// state message then makes. A process that predates acts reads that
// message as a state it cannot parse and ignores it; the state message is
// unchanged. The same message is kept in the hash field a (the latest act),
// so that a process that re-reads the state (at start, after a reconnect:
// it missed the messages) names the act that made it, as the messages
// would have; an older process's script never writes a, and an act's
// message names the state version it made, so a stale one names no newer
// state.
//
// ARGV[29] and ARGV[30] are the incarnation and the version of the caller's
// mirror (absent: an older caller). When the state replied is newer than
// the mirror's and the latest act (a) made it, the reply ends with that
// act's message: the caller may learn of the state from this reply (or a
// re-read) before the act's messages reach it, and names the act as they
// would (modelact.go). Every other reply is integers only.
//
// Reply: the state (18 + 2n integers), then now, the routed entry (-1 the
// primary, -2 exhausted, -3 no hedge), the probe number and the uncounted
// flag (a chain entry serving a turn in Primary), then the n
// disables' ends, then n and closedAt, then the act's message if any.
const modelLua = `
local key = KEYS[1]
local op = ARGV[1]
local th, need, maxf = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local rec, lease, n = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local ch = ARGV[8]
local tep, tg, tce, tpr, ten = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local kind, flag = tonumber(ARGV[14]), tonumber(ARGV[15])
local qcd = tonumber(ARGV[17] or '') or 600000000
local hint = tonumber(ARGV[18] or '') or 0
local tmo = tonumber(ARGV[19] or '') or 0
local issued = tonumber(ARGV[20] or '') or 0
local probed = tonumber(ARGV[21] or '') or 0
local slow = {}
for w in string.gmatch(ARGV[22] or '', '%S+') do slow[tonumber(w)] = true end
local skip = tonumber(ARGV[23] or '') or -1
local ttl = tonumber(ARGV[24] or '') or 0
local reason = ARGV[25] or ''
local bf = tonumber(ARGV[26] or '') or 1
local mx = tonumber(ARGV[27] or '') or 10 * rec
local opact = ARGV[28] or ''
local note = nil
local now
if ARGV[16] ~= nil and ARGV[16] ~= '' then
  now = tonumber(ARGV[16])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function S(x) return string.format('%d', x) end
local x = {}
local old = redis.call('HGET', key, 'p')
if old then
  for w in string.gmatch(old, '%S+') do x[#x + 1] = tonumber(w) end
end
if #x == 14 + 2 * n then
  x[15 + 2 * n] = (x[8] >= 0) and (x[8] + rec) or 0
  x[16 + 2 * n], x[17 + 2 * n], x[18 + 2 * n] = 0, 0, 0
end
if #x ~= 18 + 2 * n then
  x = {now, 0, 0, now, now, 0, 0, -1, 0, 0, 0, 0}
  for i = 1, 2 * n do x[12 + i] = 0 end
  x[13 + 2 * n] = now
  x[14 + 2 * n] = 0
  x[15 + 2 * n], x[16 + 2 * n], x[17 + 2 * n], x[18 + 2 * n] = 0, 0, 0, 0
  old = nil
end
local du = {}
local dold = redis.call('HGET', key, 'd') or ''
for w in string.gmatch(dold, '%S+') do du[#du + 1] = tonumber(w) end
if #du ~= n or old == nil then
  du = {}
  for i = 1, n do du[i] = 0 end
end
local nt, ca = 0, now
local kold = redis.call('HGET', key, 'k') or ''
if old ~= nil then
  local kw = {}
  for w in string.gmatch(kold, '%S+') do kw[#kw + 1] = tonumber(w) end
  if #kw == 2 then nt, ca = kw[1], kw[2] else ca = 0 end
end
local ep, v, st, g, ce, f, s, ta, act, pr, pst, pq = unpack(x, 1, 12)
local cg, pv = x[13 + 2 * n], x[14 + 2 * n]
local cen, cause, sh, lf = x[15 + 2 * n], x[16 + 2 * n], x[17 + 2 * n], x[18 + 2 * n]
local function A(i) return x[12 + i] end
local function D(i) return x[12 + n + i] end
local function active()
  for i = 1, n do
    if D(i) == 0 and A(i) < maxf then return i - 1 end
  end
  return -1
end
local function zero() f = 0; sh = 0; lf = 0 end
local function opening(at, raise)
  if st == 0 and at - ca >= mx then nt = 0 end
  if raise then nt = nt + 1 end
end
local function trip(at, k, h, raise)
  opening(at, raise)
  local d, c = rec, 0
  if nt > 1 and bf > 1 then
    d = rec * bf ^ (nt - 1)
    if d ~= d or d >= mx then d = mx else d = math.floor(d) end
    c = 4
  end
  local e = at + d
  if sh > e then e = sh; c = 1 end
  if k == 2 then
    c = 2
    if h == 0 and at + qcd > e then e = at + qcd end
  end
  st = 1; g = g + 1; cg = g; zero(); s = 0; ta = at; cen = e; cause = c; act = 1; pr = 0; pst = 0
end
local function count(h, at)
  f = f + 1
  if at > lf then lf = at end
  if h > sh then sh = h end
end
local function probeFailed(k, h, at)
  s = 0
  count(h, at)
  if k == 1 or k == 2 or f >= th then trip(at, k, h, f >= th) end
end
local function expire()
  if st == 2 and pr == 1 and now - pst >= lease then
    local e = pst + lease
    pr = 0; pst = 0
    probeFailed(0, 0, e)
  end
end
local function usable(sk)
  for i = 1, n do
    if D(i) == 0 and A(i) < maxf and i - 1 ~= sk and not slow[i] then return i - 1 end
  end
  return -1
end
local function clearBudgets()
  for i = 1, n do x[12 + i] = 0 end
end
expire()
for i = 1, n do
  if D(i) == 0 then du[i] = 0 end
  if du[i] > 0 and now >= du[i] then x[12 + n + i] = 0; du[i] = 0 end
end
local entry, probe, unc = -1, 0, 0
if op == 'begin' then
  if st == 1 and now >= cen then
    st = 2; g = g + 1; cg = g; zero(); s = 0
  end
  local alt = usable(-1)
  local past = slow[0] and alt >= 0
  if st == 0 then
    if past then entry = alt; unc = 1 end
  elseif st == 2 and pr == 0 and probed == 0 then
    if past then
      entry = alt
    else
      pq = pq + 1; pr = 1; pst = now; probe = pq
    end
  elseif n == 0 then
    if probed == 1 or (st == 1 and cause == 3) then entry = -2 end
  else
    entry = active()
    if entry < 0 then
      entry = -2
    elseif slow[entry + 1] and alt >= 0 then
      entry = alt
    end
  end
elseif op == 'hedge' then
  entry = usable(skip)
  if entry < 0 then entry = -3 end
  if st == 0 then unc = 1 end
elseif op == 'success' or op == 'failure' or op == 'cancel' then
  if tpr ~= 0 then
    if st == 2 and pr == 1 and pq == tpr and g == tg then
      pr = 0; pst = 0
      if op == 'success' then
        if tg > pv then pv = tg end
        zero(); s = s + 1
        if s >= need then
          st = 0; g = g + 1; cg = g; ce = ce + 1; zero(); s = 0; ta = -1; cen = 0; cause = 0; pr = 0; pst = 0
          ca = now
          clearBudgets()
        end
      elseif op == 'failure' and flag == 1 then
        s = 0
        trip(now, 0, 0, true)
      elseif op == 'failure' then
        probeFailed(kind, hint, now)
      end
    end
  elseif op ~= 'cancel' then
    if ten < 0 then
      if st == 0 and tg >= cg then
        if op == 'success' then
          if f > 0 then
            if tg > pv then pv = tg end
            zero(); g = g + 1
          end
        elseif tg >= pv then
          if f == 0 then g = g + 1 end
          local at = now
          if tmo == 1 and issued > 0 and issued < now then at = issued end
          count(hint, at)
          if kind == 2 or f >= th or flag == 1 then trip(lf, kind, hint, f >= th or flag == 1) end
        end
      end
    elseif op == 'failure' and ce == tce and ten < n then
      local a = A(ten + 1) + 1
      if kind == 2 and a < maxf then a = maxf end
      x[13 + ten] = a
    end
  end
elseif op == 'avail' then
  if kind >= 0 and kind < n then
    x[13 + n + kind] = (flag == 1) and 0 or 1
    du[kind + 1] = 0
    redis.call('HDEL', key, 'dr' .. kind)
    note = S(kind) .. ' '
  end
elseif op == 'disable' then
  if kind >= 0 and kind < n then
    x[13 + n + kind] = 1
    du[kind + 1] = (ttl > 0) and (now + ttl) or 0
    redis.call('HSET', key, 'dr' .. kind, reason)
    note = S(kind) .. ' ' .. reason
  end
elseif op == 'hold' then
  local e = now + ttl
  if st ~= 1 then
    opening(now, false)
    st = 1; g = g + 1; cg = g; zero(); s = 0; ta = now; act = 1; pr = 0; pst = 0; cen = e
  elseif e > cen then
    cen = e
  end
  cause = 3
  redis.call('HSET', key, 'hr', reason)
  note = '-1 ' .. reason
elseif op == 'release' then
  if st == 1 and cause == 3 and cen > now then cen = now end
elseif op == 'reset' then
  if st ~= 0 then ca = now end
  nt = 0
  st = 0; g = g + 1; cg = g; ce = ce + 1; zero(); s = 0; ta = -1; cen = 0; cause = 0; act = 0; pr = 0; pst = 0
  clearBudgets()
end
x[1], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12] = ep, st, g, ce, f, s, ta, act, pr, pst, pq
x[13 + 2 * n], x[14 + 2 * n] = cg, pv
x[15 + 2 * n], x[16 + 2 * n], x[17 + 2 * n], x[18 + 2 * n] = cen, cause, sh, lf
local parts = {}
for i = 1, #x do parts[i] = S(x[i]) end
local p = table.concat(parts, ' ')
local dparts = {}
local anyd = false
for i = 1, n do
  dparts[i] = S(du[i])
  if du[i] > 0 then anyd = true end
end
local d = anyd and table.concat(dparts, ' ') or ''
local k = S(nt) .. ' ' .. S(ca)
if p ~= old or note or d ~= dold or k ~= kold then
  v = v + 1
  x[2] = v
  parts[2] = S(v)
  p = table.concat(parts, ' ')
  redis.call('HSET', key, 'p', p)
  if anyd then
    redis.call('HSET', key, 'd', d)
  elseif dold ~= '' then
    redis.call('HDEL', key, 'd')
  end
  redis.call('HSET', key, 'k', k)
  if opact ~= '' then
    local au = 0
    if op == 'hold' or (op == 'disable' and ttl > 0) then au = now + ttl end
    local am = 'act ' .. S(ep) .. ' ' .. S(v) .. ' ' .. opact .. ' ' .. S(au) .. ' ' .. reason
    redis.call('HSET', key, 'a', am)
    redis.call('PUBLISH', ch, am)
  end
  redis.call('PUBLISH', ch, p .. '\n' .. d .. '\n' .. (note or '') .. '\n' .. k)
end
local mep, mv = tonumber(ARGV[29] or ''), tonumber(ARGV[30] or '')
local seen = nil
if mep ~= nil and mv ~= nil and (mep ~= ep or mv < v) then
  local am = redis.call('HGET', key, 'a')
  if am then
    local aep, av = string.match(am, '^act (%d+) (%d+) ')
    if aep == S(ep) and av == S(v) then seen = am end
  end
end
x[#x + 1] = now
x[#x + 1] = entry
x[#x + 1] = probe
x[#x + 1] = unc
for i = 1, n do x[#x + 1] = du[i] end
x[#x + 1] = nt
x[#x + 1] = ca
if seen then x[#x + 1] = seen end
return x
`

// modelScript is loaded once per store (EVALSHA, then EVAL after NOSCRIPT).
var modelScript = rueidis.NewLuaScript(modelLua)
