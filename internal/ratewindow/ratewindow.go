// Package ratewindow is the failure-rate window of SEMANTICS §8.1 and §8.2,
// shared by the tool breaker (package breaker) and the model breaker (package
// fallback).
//
// A [Window] is a ring of [Buckets] buckets of Span/Buckets each, counting
// verdicts (successes, failures, slow successes) by the time each outcome
// arrives. Time is an int64 clock offset in nanoseconds (the breakers' offsets
// since their epoch); the window never reads a clock itself. Buckets roll
// lazily when they are touched: there is no goroutine and no timer.
//
// A [Rule] says when the counts trip a breaker: after a failure, when the
// window holds at least MinCalls verdicts and failures/verdicts ≥ FailureRate;
// after a slow success, when slow/verdicts ≥ SlowRate with the same minimum.
//
// # Concurrency
//
// A Window is safe for concurrent use, and recording a verdict takes no lock
// in the common case: one atomic load of the bucket's stamp and one atomic add
// (two for a slow success). Only the first verdict in a new bucket (at most
// once per Span/Buckets per bucket) takes the window's mutex to roll it, so a
// breaker can record a success on its lock-free closed path at the cost of the
// clock read that dates it (§8.4). Counts and Reset may run at any time; a
// verdict recorded concurrently with Reset lands either before it (and is
// cleared) or after it. The counts are a sum of independent atomic counters, so
// a reader racing with writers may see one verdict's counters partly applied;
// the rule is checked again on the next verdict.
package ratewindow

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Buckets is the number of buckets in a window (SEMANTICS §8.1).
const Buckets = 10

// Defaults of SEMANTICS §8.1, for settings left zero.
const (
	DefaultSpan     = 30 * time.Second // RateWindow
	DefaultMinCalls = 20               // RateMinCalls
)

// empty is the stamp of a bucket that counts nothing (never touched, or cleared).
const empty = math.MinInt64

// Outcome is a verdict the window counts.
type Outcome uint8

// The verdicts a window counts. Refusals, cancellations, stale outcomes and
// answers with no verdict are never recorded.
const (
	// Success is a successful call that was not slow.
	Success Outcome = iota
	// Failure is a failed call (a timeout included).
	Failure
	// SlowSuccess is a successful call whose first content came later than
	// the slow-call threshold: a success for every rule, and a slow call in
	// the window.
	SlowSuccess
)

// Counts are the verdicts a window holds at one instant.
type Counts struct {
	Verdicts int64 // successes (slow ones included) and failures
	Failures int64
	Slow     int64 // slow successes
}

// bucket counts the verdicts of one slice of time. stamp is the slice's
// number (time / width) or empty; the counters belong to that slice.
type bucket struct {
	stamp atomic.Int64
	ok    atomic.Int64 // successes, slow ones included
	fail  atomic.Int64
	slow  atomic.Int64
}

// Window is a rolling count of verdicts over a span of time, in [Buckets]
// buckets. Create it with [New] or call [Window.Init] on a zero Window; a
// Window must not be copied after first use.
type Window struct {
	width int64      // ns per bucket, ≥ 1
	mu    sync.Mutex // serializes rolls and Reset
	b     [Buckets]bucket
}

// New returns an empty window covering span (zero: [DefaultSpan]; a span
// shorter than Buckets nanoseconds counts in 1 ns buckets).
func New(span time.Duration) *Window {
	w := new(Window)
	w.Init(span)
	return w
}

// Init makes w an empty window covering span, as [New] does. Call it before
// w is shared.
func (w *Window) Init(span time.Duration) {
	if span <= 0 {
		span = DefaultSpan
	}
	w.width = max(int64(span)/Buckets, 1)
	for i := range w.b {
		w.b[i].stamp.Store(empty)
	}
}

// Span returns the time the window covers: Buckets × the bucket width.
func (w *Window) Span() time.Duration { return time.Duration(w.width * Buckets) }

// slot returns the number of the bucket slice that holds now, and its index.
func (w *Window) slot(now int64) (n int64, i int) {
	n = now / w.width
	if now < 0 && now%w.width != 0 {
		n-- // floor, for clocks read before the epoch
	}
	i = int(n % Buckets)
	if i < 0 {
		i += Buckets
	}
	return n, i
}

// Add records outcome o, arrived at now.
func (w *Window) Add(now int64, o Outcome) {
	n, i := w.slot(now)
	bk := &w.b[i]
	if bk.stamp.Load() != n && !w.roll(bk, n) {
		return
	}
	switch o {
	case Success:
		bk.ok.Add(1)
	case Failure:
		bk.fail.Add(1)
	case SlowSuccess:
		bk.ok.Add(1)
		bk.slow.Add(1)
	}
}

// roll makes bk count slice n, clearing what it counted for an older slice.
// It reports false when bk already counts a newer slice: a verdict dated that
// far back is outside the window and is dropped.
func (w *Window) roll(bk *bucket, n int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch s := bk.stamp.Load(); {
	case s == n:
		return true // another caller rolled it first
	case s > n:
		return false
	}
	// Counters first, stamp last: a caller that sees the new stamp adds to
	// cleared counters.
	bk.ok.Store(0)
	bk.fail.Store(0)
	bk.slow.Store(0)
	bk.stamp.Store(n)
	return true
}

// Counts returns the verdicts of the window that ends at now: the buckets of
// the last Buckets slices up to now's (and any a concurrent caller with a
// later clock reading has already opened).
func (w *Window) Counts(now int64) Counts {
	n, _ := w.slot(now)
	var c Counts
	for i := range w.b {
		bk := &w.b[i]
		if s := bk.stamp.Load(); s == empty || s <= n-Buckets {
			continue
		}
		ok, fail := bk.ok.Load(), bk.fail.Load()
		c.Verdicts += ok + fail
		c.Failures += fail
		c.Slow += bk.slow.Load()
	}
	return c
}

// Record adds outcome o arrived at now and reports whether the window, with
// it, trips rule r ([Rule.Trips]). A plain success never trips, and costs only
// the add.
func (w *Window) Record(now int64, o Outcome, r Rule) bool {
	w.Add(now, o)
	if o == Success {
		return false
	}
	return r.Trips(w.Counts(now), o)
}

// Reset clears the window: every bucket counts nothing. The breakers call it
// on every transition out of Closed (tool) or Primary (model), so that a
// recovered breaker starts with an empty window.
func (w *Window) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Stamps first: a concurrent Add that has not loaded its stamp yet will
	// roll (and clear) the bucket again; one that has adds to a bucket no one
	// counts until it is rolled and cleared.
	for i := range w.b {
		w.b[i].stamp.Store(empty)
	}
	for i := range w.b {
		bk := &w.b[i]
		bk.ok.Store(0)
		bk.fail.Store(0)
		bk.slow.Store(0)
	}
}

// Rule is the trip rule of SEMANTICS §8.1 and §8.2. A zero rate turns its
// half of the rule off.
type Rule struct {
	FailureRate float64 // 0 < r ≤ 1; zero: no failure-rate trip
	SlowRate    float64 // 0 < r ≤ 1; zero: no slow-call trip
	MinCalls    int64   // the verdicts the window must hold before either trips
}

// Trips reports whether counts c, just after outcome o, trip the breaker:
// after a Failure, when c holds at least MinCalls verdicts and
// Failures/Verdicts ≥ FailureRate; after a SlowSuccess, when Slow/Verdicts ≥
// SlowRate with the same minimum. A Success never trips.
func (r Rule) Trips(c Counts, o Outcome) bool {
	if c.Verdicts <= 0 || c.Verdicts < r.MinCalls {
		return false
	}
	// The quotient is correctly rounded, so a ratio equal to the rate as
	// written (3/10 against 0.3) compares equal.
	switch o {
	case Failure:
		return r.FailureRate > 0 && float64(c.Failures)/float64(c.Verdicts) >= r.FailureRate
	case SlowSuccess:
		return r.SlowRate > 0 && float64(c.Slow)/float64(c.Verdicts) >= r.SlowRate
	}
	return false
}
