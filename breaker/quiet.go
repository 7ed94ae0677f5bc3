package breaker

import (
	"sync/atomic"
	"time"
)

// QuietSource is an optional interface of a [Shared]: a Shared that
// implements it publishes a [Quiet] word, and while that word says "closed
// and clean" the Breaker grants the gate and drops a non-probe success
// itself, without calling the Shared, exactly as the Shared would have: a
// permit of the published generation, issued now on the Quiet's clock.
type QuietSource interface {
	// Quiet returns the breaker's published word (nil: no fast path). It is
	// called once, by Init, after Attach.
	Quiet() *Quiet
}

// SharedClock is a backend's clock as the fast path reads it: one monotonic
// clock read plus a published offset, in nanoseconds on the backend's clock
// (fleet: the estimated store time, ns since the Unix epoch). A backend
// re-anchors it with Set whenever its estimate changes. Create it with
// [NewSharedClock]; it is safe for concurrent use.
type SharedClock struct {
	epoch time.Time    // monotonic anchor
	off   atomic.Int64 // the backend's clock at epoch, ns
	now   func() int64
}

// NewSharedClock returns a clock that reads 0 now until Set. With now not
// nil (a test's virtual clock, in ns), Now returns now() and Set does nothing.
func NewSharedClock(now func() int64) *SharedClock {
	return &SharedClock{epoch: time.Now(), now: now}
}

// Set says that the backend's clock reads t (ns) at this instant; from then
// on Now advances with the local monotonic clock.
func (c *SharedClock) Set(t int64) { c.off.Store(t - int64(time.Since(c.epoch))) }

// Now returns the backend's clock now, in ns.
func (c *SharedClock) Now() int64 {
	if c.now != nil {
		return c.now()
	}
	return int64(time.Since(c.epoch)) + c.off.Load()
}

// Quiet is the published "closed and clean" word of one shared breaker: its
// [Shared] keeps it current (Publish after every change of its state), so
// that a Breaker can tell, with one atomic load, that a gate would grant a
// permit of a known generation and that a success would change nothing.
// Create it with [NewQuiet]; it is safe for concurrent use.
type Quiet struct {
	word  atomic.Uint64 // gen<<1 | 1 while quiet; 0 otherwise
	clock *SharedClock
	unit  int64 // ns per unit of SharedPermit.Issued
}

// NewQuiet returns a word that is not quiet, whose permits are issued on
// clock in units of unit ([SharedPermit.Issued]: Now()/unit; unit <= 0 means
// nanoseconds).
func NewQuiet(clock *SharedClock, unit time.Duration) *Quiet {
	return &Quiet{clock: clock, unit: max(int64(unit), 1)}
}

// Publish sets the word: quiet (closed, no failure pending, the backend
// deciding), with gen the generation the gate grants permits in (below
// 2^63), or not quiet.
func (q *Quiet) Publish(gen uint64, quiet bool) {
	var w uint64
	if quiet {
		w = gen<<1 | 1
	}
	q.word.Store(w)
}

// quietAllow is the fast path of a shared gate: a permit and true while q is
// quiet.
func (b *Breaker) quietAllow() (Permit, bool) {
	q := b.quiet
	if q == nil {
		return Permit{}, false
	}
	w := q.word.Load()
	if w&1 == 0 {
		return Permit{}, false
	}
	return Permit{b: b, gen: w >> 1, at: q.clock.Now() / q.unit}, true
}

// quietSuccess reports whether a success of p changes nothing: p is not the
// probe and the breaker is quiet.
func (b *Breaker) quietSuccess(p Permit) bool {
	return b.quiet != nil && !p.probe && b.quiet.word.Load()&1 != 0
}
