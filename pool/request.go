package pool

import (
	"math/bits"
	"time"
)

// Request is the memory of one request in one pool: the members it has
// tried (a member tried or failed is not admitted again for the request),
// whether its pool attempt has held a member probe, and the outcomes of its
// pool attempt so far, for [Pool.End]. The zero value is a new request; use
// one Request per request and pool. It does not allocate, and the pool
// guards it with its lock, so two attempts of one hedged request may settle
// at once.
type Request struct {
	pool  *Pool  // the pool it belongs to, bound at first use
	epoch uint32 // the pool attempt's number: End moves it on

	tried       uint64 // members chosen in this request
	probeFailed bool   // a member probe of this request failed

	// The pool attempt in progress.
	begun     bool
	start     int64 // its first choice
	probed    bool  // it has held a member probe
	served    bool
	attempted uint64 // members chosen in it
	failed    uint64 // members that failed it with a verdict
	limited   uint64 // ... with a rate limit (throttle, overload) or a quota
	quota     uint64 // ... with a quota
	timedOut  uint64 // ... with a timeout
}

// bind attaches r to p on first use. p's lock must be held.
func (r *Request) bind(p *Pool) {
	if r.pool != p {
		*r = Request{pool: p}
	}
}

// Kind is the kind of a failed pool attempt, for the model breaker: the
// fallback package's Transient, RateLimit and Quota.
type Kind int

const (
	// Transient is any failure that is not a rate limit.
	Transient Kind = iota
	// RateLimit says every member tried was rate limited (a throttle, an
	// overload, or a quota).
	RateLimit
	// Quota says every member tried had exhausted its quota.
	Quota
)

// String returns "transient", "rate_limit" or "quota".
func (k Kind) String() string {
	switch k {
	case RateLimit:
		return "rate_limit"
	case Quota:
		return "quota"
	}
	return "transient"
}

// Outcome is what a pool attempt came to.
type Outcome int

const (
	// Skipped: no member was tried. The attempt carries no verdict: a
	// model breaker routes past the pool, drawing no ticket.
	Skipped Outcome = iota
	// Served: a member served the request. The model breaker's verdict is
	// a success.
	Served
	// Unsettled: no member served, and none failed with a verdict (each
	// answered with no verdict, or was cancelled). The attempt carries no
	// verdict; the client gets the last member's answer.
	Unsettled
	// Failed: no member served, and some failed. The model breaker's
	// verdict is a failure of [Result].Kind.
	Failed
)

// String returns "skipped", "served", "unsettled" or "failed".
func (o Outcome) String() string {
	return [...]string{"skipped", "served", "unsettled", "failed"}[o]
}

// Result is a pool attempt's one verdict for the model breaker, as
// [Pool.End] returns it.
type Result struct {
	Outcome Outcome
	// Tried is the number of members the attempt tried.
	Tried int
	// Kind is the failure's kind (Outcome Failed): Quota when every member
	// tried failed with a quota, RateLimit when every one failed with a
	// rate limit of any kind, else Transient.
	Kind Kind
	// Timeout reports that every member tried timed out; Elapsed is then
	// the pool attempt's run, from its first choice to End.
	Timeout bool
	Elapsed time.Duration
	// Hint is the earliest time at which any member may serve again (a
	// cooldown's end, a provider's hint, a headroom reset); zero when some
	// member may serve now. Set only for Failed.
	Hint time.Time
}

// End ends r's pool attempt and returns its verdict for the model breaker
// (SEMANTICS §9.3 rule 6). Members r tried stay excluded: a later
// [Pool.Choose] with r begins the request's next pool attempt, which may hold
// a probe again. Call it once the attempt's member attempts are settled.
func (p *Pool) End(now time.Time, r *Request) Result {
	t := now.UnixNano()
	p.f.mu.Lock()
	r.bind(p)
	res := Result{Tried: bits.OnesCount64(r.attempted)}
	switch {
	case r.attempted == 0:
		res.Outcome = Skipped
	case r.served:
		res.Outcome = Served
	case r.failed == 0:
		res.Outcome = Unsettled
	default:
		res.Outcome = Failed
		switch {
		case r.quota == r.attempted:
			res.Kind = Quota
		case r.limited == r.attempted:
			res.Kind = RateLimit
		}
		if r.timedOut == r.attempted {
			res.Timeout, res.Elapsed = true, time.Duration(t-r.start)
		}
	}
	r.epoch++
	r.begun, r.probed, r.served = false, false, false
	r.attempted, r.failed, r.limited, r.quota, r.timedOut = 0, 0, 0, 0, 0
	p.f.mu.Unlock()
	if res.Outcome == Failed {
		res.Hint = p.nextServe(t)
	}
	return res
}
