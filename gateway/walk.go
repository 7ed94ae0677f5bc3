package gateway

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// walk is a request's walk over its route's candidates, attempt by
// attempt: the breaker's memory of the turn, the request's deadline, and
// what each candidate did with the request, so that the next attempt goes
// where it may still serve. It is the one value the attempt loop changes;
// its candidates are chain entries and, inside a pool entry's attempt,
// the pool's members.
type walk struct {
	att      fallback.Attempts // the breaker's memory of the turn
	deadline deadlineContext
	attempts int             // attempts made (breaker turns with an upstream request)
	upstream time.Duration   // time spent waiting on upstreams (the ladder included)
	last     *target         // the candidate that served or failed last
	marks    map[string]mark // what each candidate (by upstream/model) did with the request
	serveAt  time.Time       // the earliest time a candidate said it may serve again
	refused  refusals
	skips    skips
	check    bodyCheck
	pools    poolWalk // the request in the route's pools (pool_walk.go)
}

// mark is what a candidate did with the request, as a set of bits: one map
// per request rather than one per fact.
type mark uint8

const (
	// markSlow: it failed the request slowly (a timeout or a rate limit):
	// a second try would only repeat it, so the walk stops there.
	markSlow mark = 1 << iota
	// markPassed: the walk routed past it with no verdict (it cannot serve
	// the request, or refused it translated).
	markPassed
	// markFailedEntry: a chain entry, not the primary, that failed the
	// request: while the primary is closed the breaker would hand it out
	// again, so the walk passes it.
	markFailedEntry
	// markFailed: it failed an attempt of the request, so a later attempt
	// on it is a same-model retry (the retry budget's).
	markFailed
)

// set records m for the candidate ref.
func (w *walk) set(ref string, m mark) {
	if w.marks == nil {
		w.marks = make(map[string]mark, 2)
	}
	w.marks[ref] |= m
}

// is reports whether the candidate ref has any of the marks m.
func (w *walk) is(ref string, m mark) bool { return w.marks[ref]&m != 0 }

// failed records a failed attempt on the candidate ref with its verdict f
// at now: a slow failure stops the walk at ref and may say when the chain
// serves again.
func (w *walk) failed(ref string, f fallback.Failure, now time.Time) {
	m := markFailed
	if slow(f) {
		m |= markSlow
		if f.Hint.IsZero() && f.Kind != fallback.Transient {
			f.Hint = now.Add(retry.DefaultRateLimitDelay)
		}
		if !f.Hint.IsZero() && (w.serveAt.IsZero() || f.Hint.Before(w.serveAt)) {
			w.serveAt = f.Hint
		}
	}
	w.set(ref, m)
}

// pass records that the walk routed past tg with no verdict, for param
// when the reason is a parameter tg's wire cannot express ("" otherwise).
func (w *walk) pass(tg *target, param string) {
	if param != "" {
		w.skips.list = append(w.skips.list, tg.ref+"="+param)
		if w.skips.param == "" {
			w.skips.param = param
		}
	}
	w.set(tg.ref, markPassed)
}

// servedBy returns the upstream/model that served or failed last ("" if none).
func (w *walk) servedBy() string {
	if w.last == nil {
		return ""
	}
	return w.last.ref
}

// add records that the budget refused a retry on model.
func (r *refusals) add(model string) {
	r.mu.Lock()
	if r.on == nil {
		r.on = make(map[string]bool, 1)
	}
	r.on[model] = true
	r.mu.Unlock()
}

// has reports whether the budget refused a retry on model.
func (r *refusals) has(model string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.on[model]
}

// refusals are the models whose retry budget refused a retry of the
// request. A hedge's ladder asks the budget on its own goroutine, so they
// are under a mutex.
type refusals struct {
	mu sync.Mutex
	on map[string]bool
}

// skips are the entries the request routed past for what their wire cannot
// express (list: "ref=param"), the first such parameter, the first reason
// when the request did not decode, and the last translated entry's
// rejection.
type skips struct {
	list     []string
	param    string
	why      string
	rejected *upstreamError
}

// bodyCheck is json.Valid of a body first translated, run once per
// request, by the first attempt that forwards the body as it is (attempts
// may run at once: hedging).
type bodyCheck struct {
	once  sync.Once
	valid bool
}

// ok reports whether body is valid JSON, checking it on the first call.
func (c *bodyCheck) ok(body []byte) bool {
	c.once.Do(func() { c.valid = json.Valid(body) })
	return c.valid
}
