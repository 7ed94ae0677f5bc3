package pool

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Admits reports whether [Pool.Choose] would find a member admitted for r at
// now (the pure read a caller makes before it asks the model breaker for a
// ticket: a pool with no admitted member is skipped, SEMANTICS §9.3 rule 6).
// It changes nothing, except that it asks n.CanServe.
func (p *Pool) Admits(now time.Time, r *Request, n Need) bool {
	g := p.readGates(p.servable(&n), true)
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if r.pool != p {
		r = &Request{} // r is new to this pool: nothing tried
	}
	adm, _ := p.admitted(now.UnixNano(), r, &n, &g, false)
	return adm != 0
}

// Unavailable returns the [*UnavailableError] that [Pool.Choose] would return
// for r at now if no member were admitted: when the pool may serve again and
// whether it is out for the providers' say. It is pure but for n.CanServe.
func (p *Pool) Unavailable(now time.Time, r *Request, n Need) *UnavailableError {
	return p.unavailable(now.UnixNano(), r, &n, p.servable(&n))
}

// unavailable builds the error for a request that found no member among
// serve admitted at t.
func (p *Pool) unavailable(t int64, r *Request, n *Need, serve uint64) *UnavailableError {
	e := &UnavailableError{Pool: p.name}
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if r.pool == p {
		serve &^= r.tried
	}
	var next int64
	limited := serve != 0
	for m := serve; m != 0; m &= m - 1 {
		mb := &p.members[trailing(m)]
		at, byProvider := mb.outUntil(t, n)
		if at > t && (next == 0 || at < next) {
			next = at
		}
		limited = limited && byProvider
	}
	if next != 0 {
		e.RetryAt = time.Unix(0, next)
	}
	e.Limited = limited
	return e
}

// outUntil returns when m may serve a request needing n again (t or earlier
// if now, as far as its breaker and headroom tell), and whether what keeps it
// out is the provider's say: its headroom, or a breaker opened until a
// provider's hint or by a quota. p.f.mu must be held; the breaker's reads
// are pure.
func (m *member) outUntil(t int64, n *Need) (int64, bool) {
	gate := satAdd(t, int64(m.b.RetryIn()))
	head := m.d.headroomUntil(t, n)
	if head > t && head >= gate {
		return head, true
	}
	if gate <= t {
		return gate, false
	}
	s := m.b.Snapshot()
	return gate, s.State == breaker.Open && (s.Cause == breaker.CauseHint || s.Cause == breaker.CauseQuota)
}

// nextServe returns the earliest time at which any member may serve again,
// or the zero Time when some member may serve at t.
func (p *Pool) nextServe(t int64) time.Time {
	var none Need
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	var next int64
	for i := range p.members {
		at, _ := p.members[i].outUntil(t, &none)
		if at <= t {
			return time.Time{}
		}
		if next == 0 || at < next {
			next = at
		}
	}
	return time.Unix(0, next)
}

// Status is what the pool knows of one member, for an admin view.
type Status struct {
	Name   string
	Weight float64
	// Breaker is the member breaker's snapshot.
	Breaker breaker.Snapshot
	// InFlight counts the deployment's attempts in flight (every pool
	// sharing its figures).
	InFlight int
	// Stream and Whole are the latency estimates (time to first content)
	// for streamed and whole answers; zero when the member has had no
	// sample of that kind within τ = 10 s.
	Stream, Whole time.Duration
	// Headroom is what is left of each figure the member's answers carried:
	// the latest answer's remaining figure less what started since, with
	// its reset; a zero Limit is unknown or restored.
	Headroom Headroom
	// LastMinute counts the attempts started on the deployment in this
	// process over the last minute (by any pool sharing its figures), and
	// Share is its part of the pool's members' counts (0 with none).
	LastMinute int
	Share      float64
}

// Status returns what the pool knows of member i at now. It is pure.
func (p *Pool) Status(now time.Time, i int) Status {
	t := now.UnixNano()
	m := &p.members[i]
	st := Status{Name: m.name, Weight: m.weight, Breaker: m.b.Snapshot()}
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	d := m.d
	st.InFlight = d.inFlight
	if e := d.est[1]; e.fresh(t) {
		st.Stream = time.Duration(e.ns)
	}
	if e := d.est[0]; e.fresh(t) {
		st.Whole = time.Duration(e.ns)
	}
	st.LastMinute = d.lastMinute.total(t)
	if all := p.lastMinute(t); all > 0 {
		st.Share = float64(st.LastMinute) / float64(all)
	}
	st.Headroom = Headroom{
		Requests:     d.requests.left(t, int64(d.starts-d.requests.seq-1)),
		Tokens:       d.tok.left(t, d.tokens-d.tok.base),
		InputTokens:  d.inTok.left(t, d.input-d.inTok.base),
		OutputTokens: d.outTok.left(t, 0),
	}
	return st
}

// lastMinute returns the attempts started on the pool's members over the
// last minute of t. p.f.mu must be held.
func (p *Pool) lastMinute(t int64) int {
	n := 0
	for i := range p.members {
		n += p.members[i].d.lastMinute.total(t)
	}
	return n
}

// left returns f as a Limit, less used, or the zero Limit when f is unset
// or has reset by t.
func (f *figure) left(t, used int64) Limit {
	if !f.set || t >= f.reset {
		return Limit{}
	}
	return Limit{Remaining: f.remaining - used, Reset: time.Unix(0, f.reset)}
}
