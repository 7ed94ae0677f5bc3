package fleet

import (
	"math"
	"sync"

	"github.com/loopctl/loopctl-go/breaker"
)

// localTool is the in-process tool breaker a process uses while the store is
// down (Policy Local): the same rules as the script, on the local wall clock
// (ns), seeded from the mirror. It is guarded by its own mutex.
type localTool struct {
	base       uint64 // localBit and this local breaker's id: the top of every generation
	mu         sync.Mutex
	th         int64
	rec, lease int64 // ns
	m          int   // as the script: 0 closed, 1 open, 2 probing, 3 slot free
	g          uint64
	f          int64
	lf         int64
	hasLF      bool
	ps         int64
	pl         int64 // the lease the probe in flight was granted
	sg         uint64
	// §9.1 and §9.3.1, as the script keeps them (ns; noUntil: none).
	nums              *toolNumbers
	n, ca, bu, hu, hc int64
}

// noUntil marks a local cooldown end that is not set.
const noUntil = math.MinInt64

// setNumbers takes k's numbers, in ns. l.mu must be held (or l unshared).
func (l *localTool) setNumbers(k *toolNumbers) {
	l.nums, l.th, l.rec, l.lease = k, k.threshold, k.rec*1000, k.lease*1000
}

// cooldown is c(n) in ns for the n in force (at least the base).
func (l *localTool) cooldown() int64 { return l.nums.cooldown(max(l.n, 1)) * 1000 }

// openUntil is when an open local breaker may grant a probe.
func (l *localTool) openUntil() int64 { return max(l.bu, l.hu) }

// trip opens l after a fresh failure (l.lf set) at now, as the script's
// tripit: n + 1 (reset first on a trip from closed after MaxRecoveryTimeout
// closed), the cooldown c(n) from the last failure. l.mu must be held.
func (l *localTool) trip(now int64) {
	if l.m == 0 && now-l.ca >= l.nums.maxRec*1000 {
		l.n = 0
	}
	l.n = min(l.n+1, math.MaxInt32)
	l.bu, l.hu, l.hc, l.ps = l.lf+l.cooldown(), noUntil, 0, 0
	l.setMode(1)
}

// localBit marks the generations of permits issued by a local breaker; bits
// 40-55 hold the local breaker's id, so that a permit of an earlier local
// breaker is never taken for one of the current one.
const localBit = 1 << 63

// issued reports whether a permit of generation gen came from l.
func (l *localTool) issued(gen uint64) bool { return gen&^(1<<40-1) == l.base }

func (l *localTool) setMode(m int) { l.m = m; l.g++ }

// expire applies a lapsed probe lease. l.mu must be held.
func (l *localTool) expire(now int64) {
	if l.m == 2 && now >= l.ps+l.pl {
		l.lf, l.hasLF = l.ps+l.pl, true
		l.trip(now)
	}
}

// allow is the gate: a permit, or the wait (ns) and state of a refusal.
func (l *localTool) allow(now int64) (Permit, int64, breaker.State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	switch {
	case l.m == 0:
		return Permit{gen: l.g, at: now}, 0, 0
	case l.m == 1 && now < l.openUntil():
		return Permit{}, l.openUntil() - now, breaker.Open
	case l.m == 1 || l.m == 3:
		l.ps, l.pl = now, l.lease
		l.setMode(2)
		return Permit{gen: l.g, probe: true, dl: now + l.lease, at: now}, 0, 0
	}
	return Permit{}, max(l.ps+l.pl-now, 1), breaker.HalfOpen
}

// success applies a success arriving at now; with trip (the process's rate
// window tripped on it, §8.2) a closed breaker then trips, dated now; with
// slow (a probe slower than SlowCallAfter, §9.2) the current probe's success
// re-opens instead of closing, as its failure would.
func (l *localTool) success(gen uint64, probe bool, now int64, trip, slow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	switch {
	case l.m == 0:
		if l.f > 0 {
			l.f = 0
			l.g++
			l.sg = max(l.sg, gen)
		}
		if trip {
			if !l.hasLF || now > l.lf {
				l.lf = now
			}
			l.hasLF = true
			l.trip(now)
		}
	case l.m == 2 && probe && gen == l.g && slow:
		l.f++
		if !l.hasLF || now > l.lf {
			l.lf = now
		}
		l.hasLF = true
		l.trip(now)
	case l.m == 2 && probe && gen == l.g:
		l.f, l.ps, l.ca = 0, 0, now
		l.setMode(0)
		l.sg = max(l.sg, gen)
	}
}

// failure applies a failure arriving at now, dated at the earlier of now and
// at (a timeout's issue or a probe's lease end); the last failure never moves
// back. With trip (the process's rate window tripped on it, §8.1) a closed
// breaker trips whatever its count.
func (l *localTool) failure(gen uint64, now, at int64, trip bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	if gen != 0 && gen < l.sg {
		return // stale: a later call has been counted as a success
	}
	if l.m == 0 && l.f == 0 {
		l.g++
	}
	l.f++
	if t := min(now, at); !l.hasLF || t > l.lf {
		l.lf = t
	}
	l.hasLF = true
	switch l.m {
	case 0:
		if l.f >= l.th || trip {
			l.trip(now)
		}
	case 2, 3:
		l.trip(now)
	case 1:
		l.bu = max(l.bu, l.lf+l.cooldown()) // fresh bad news restarts the wait
	}
}

// limit applies a rate-limit verdict arriving at now (never stale): quota
// (else a rate limit with a hint), until the hint (local ns; hasHint false:
// a quota waits QuotaCooldown). It opens a breaker that is not open without
// raising n, and never ends a cooldown in force earlier.
func (l *localTool) limit(now int64, quota, hasHint bool, until int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	if l.m == 0 && l.f == 0 {
		l.g++
	}
	l.f++
	if !l.hasLF || now > l.lf {
		l.lf = now
	}
	l.hasLF = true
	cause := int64(1)
	if quota {
		cause = 2
		if !hasHint {
			until = now + l.nums.quota*1000
		}
	}
	if l.m != 1 {
		if l.m == 0 && now-l.ca >= l.nums.maxRec*1000 {
			l.n = 0
		}
		l.bu, l.hu, l.ps = noUntil, noUntil, 0
		l.setMode(1)
	}
	if until > l.hu {
		l.hu, l.hc = until, cause
	}
}

func (l *localTool) cancel(gen uint64, probe bool, now int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	if l.m == 2 && probe && gen == l.g {
		l.ps = 0
		l.setMode(3)
	}
}

// localView is the state of a localTool at one instant.
type localView struct {
	m       int
	f       int64
	lf, ps  int64
	pl      int64
	hasLF   bool
	n, hc   int64
	ou      int64 // an open breaker's end
	byHint  bool  // the hint or quota decides ou
	backoff float64
}

// view returns the state with the lapsed lease applied (a re-trip), and n = 0
// after MaxRecoveryTimeout closed, without changing l.
func (l *localTool) view(now int64) localView {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := localView{m: l.m, f: l.f, lf: l.lf, hasLF: l.hasLF, ps: l.ps, pl: l.pl, n: l.n, hc: l.hc,
		ou: l.openUntil(), byHint: l.hu > l.bu, backoff: l.nums.factor}
	switch {
	case v.m == 2 && now >= v.ps+l.pl:
		v.lf, v.hasLF, v.ps, v.m = v.ps+l.pl, true, 0, 1
		v.n = min(v.n+1, math.MaxInt32)
		v.ou, v.byHint = v.lf+l.nums.cooldown(v.n)*1000, false
	case v.m == 0 && now-l.ca >= l.nums.maxRec*1000:
		v.n = 0
	}
	return v
}

// state returns the public state; with lazy, an expired lease reads Open.
func (l *localTool) state(now int64, lazy bool) breaker.State {
	if lazy {
		v := l.view(now)
		return modeState(v.m)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return modeState(l.m)
}

// wouldAllow is the pure oracle.
func (l *localTool) wouldAllow(now int64) bool {
	v := l.view(now)
	switch v.m {
	case 1:
		return now >= v.ou
	case 2:
		return false
	}
	return true
}
