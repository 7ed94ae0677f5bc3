package fleet

import "github.com/loopctl/loopctl-go/breaker"

// refTool is the reference model of one local tool breaker (SEMANTICS §1,
// rev 3), written from the table, for the equivalence test. Times are µs.
// Calls are ordered by start with the counter SEMANTICS suggests: bumped on
// every state change, on the first failure after a clean state and on a
// success that resets the count.
type refTool struct {
	th         int
	rec, lease int64

	st       breaker.State
	probing  bool // HalfOpen with the slot held
	failures int
	lf       int64
	hasLF    bool
	ps       int64
	order    uint64
	maxSucc  uint64 // order of the latest-started counted success
	probeID  uint64
}

type refPermit struct {
	order  uint64
	probe  uint64 // 0: not the probe
	issued int64  // when the gate granted it (rev 3: a timeout's date)
}

func newRefTool(th int, rec, lease int64) *refTool {
	return &refTool{th: th, rec: rec, lease: lease, order: 1}
}

func (r *refTool) change(st breaker.State) { r.st = st; r.order++ }

// expire: HalfOpen with a lapsed lease re-opens, backdated to the lease's end.
func (r *refTool) expire(now int64) {
	if r.st == breaker.HalfOpen && r.probing && now-r.ps >= r.lease {
		r.lf, r.hasLF = r.ps+r.lease, true
		r.probing = false
		r.change(breaker.Open)
	}
}

// allow returns a permit, or the refusal's state and wait (µs).
func (r *refTool) allow(now int64) (refPermit, bool, breaker.State, int64) {
	r.expire(now)
	switch {
	case r.st == breaker.Closed:
		return refPermit{order: r.order, issued: now}, true, 0, 0
	case r.st == breaker.Open && now-r.lf < r.rec:
		return refPermit{}, false, breaker.Open, r.lf + r.rec - now
	case r.st == breaker.HalfOpen && r.probing:
		return refPermit{}, false, breaker.HalfOpen, r.ps + r.lease - now
	}
	r.ps, r.probing = now, true
	r.probeID++
	r.change(breaker.HalfOpen)
	return refPermit{order: r.order, probe: r.probeID, issued: now}, true, 0, 0
}

func (r *refTool) success(p refPermit, now int64) {
	r.expire(now)
	switch {
	case r.st == breaker.Closed && r.failures > 0:
		r.failures = 0
		r.maxSucc = max(r.maxSucc, p.order)
		r.order++
	case r.st == breaker.HalfOpen && r.probing && p.probe != 0 && p.probe == r.probeID:
		r.failures, r.probing = 0, false
		r.maxSucc = max(r.maxSucc, p.order)
		r.change(breaker.Closed)
	}
}

func (r *refTool) failure(p refPermit, now int64) { r.failureAt(p, now, now) }

// timeout (rev 3): dated at the permit's issue; a probe at the earlier of now
// and its lease end.
func (r *refTool) timeout(p refPermit, now int64) {
	at := p.issued
	if p.probe != 0 {
		at = min(now, p.issued+r.lease)
	}
	r.failureAt(p, now, at)
}

// failureAt is a failure arriving at now dated at at: the last failure never
// moves back.
func (r *refTool) failureAt(p refPermit, now, at int64) {
	r.expire(now)
	if p.order < r.maxSucc {
		return // stale: a call that started later succeeded
	}
	if r.st == breaker.Closed && r.failures == 0 {
		r.order++
	}
	r.failures++
	if !r.hasLF || at > r.lf {
		r.lf = at
	}
	r.hasLF = true
	switch r.st {
	case breaker.Closed:
		if r.failures >= r.th {
			r.change(breaker.Open)
		}
	case breaker.HalfOpen:
		r.probing = false
		r.change(breaker.Open)
	}
}

func (r *refTool) cancel(p refPermit, now int64) {
	r.expire(now)
	if r.st == breaker.HalfOpen && r.probing && p.probe != 0 && p.probe == r.probeID {
		r.probing = false
		r.order++
	}
}

// view is the pure read: the state with a lapsed lease applied on a copy.
func (r *refTool) view(now int64) refTool {
	c := *r
	c.expire(now)
	return c
}

func (r *refTool) wouldAllow(now int64) bool {
	c := r.view(now)
	switch {
	case c.st == breaker.Open:
		return now-c.lf >= c.rec
	case c.st == breaker.HalfOpen && c.probing:
		return false
	}
	return true
}
