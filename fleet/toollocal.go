package fleet

import (
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
	sg         uint64
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
	if l.m == 2 && now >= l.ps+l.lease {
		l.lf, l.hasLF, l.ps = l.ps+l.lease, true, 0
		l.setMode(1)
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
	case l.m == 1 && now < l.lf+l.rec:
		return Permit{}, l.lf + l.rec - now, breaker.Open
	case l.m == 1 || l.m == 3:
		l.ps = now
		l.setMode(2)
		return Permit{gen: l.g, probe: true, dl: now + l.lease, at: now}, 0, 0
	}
	return Permit{}, max(l.ps+l.lease-now, 1), breaker.HalfOpen
}

// success applies a success arriving at now; with trip (the process's rate
// window tripped on it, §8.2) a closed breaker then trips, dated now.
func (l *localTool) success(gen uint64, probe bool, now int64, trip bool) {
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
			l.setMode(1)
		}
	case l.m == 2 && probe && gen == l.g:
		l.f, l.ps = 0, 0
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
			l.setMode(1)
		}
	case 2, 3:
		l.ps = 0
		l.setMode(1)
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
	m      int
	f      int64
	lf, ps int64
	hasLF  bool
	rec    int64
}

// view returns the state with the lapsed lease applied, without changing l.
func (l *localTool) view(now int64) localView {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := localView{m: l.m, f: l.f, lf: l.lf, hasLF: l.hasLF, ps: l.ps, rec: l.rec}
	if v.m == 2 && now >= v.ps+l.lease {
		v.lf, v.hasLF, v.ps, v.m = v.ps+l.lease, true, 0, 1
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
		return now >= v.lf+v.rec
	case 2:
		return false
	}
	return true
}
