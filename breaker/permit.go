package breaker

import (
	"context"
	"errors"
	"time"
)

// Permit is what [Breaker.Allow] hands out: the right to make one call. It
// remembers the generation it was issued in (which orders the call's start),
// whether it holds the probe slot, and the probe's lease end. Settle it
// exactly once with Success, Failure, Cancel or Done. Settling it again is
// harmless where the breaker can tell (a second success or cancel of a probe
// permit does nothing, since every probe grant starts a new generation), but a
// second Failure counts as another failure (unless it is stale).
//
// A Permit is a small value: copy it freely. The zero Permit (as returned with
// a refusal) is valid and all its methods do nothing.
type Permit struct {
	b     *Breaker
	gen   uint64 // the generation at the gate: also the call's start order
	at    int64  // a probe's lease end, else the issue time (clock offsets; shared: see sharedAllow)
	probe bool
}

// IsProbe reports whether p holds the probe slot of a half-open breaker: its
// success is the one that closes the breaker.
func (p Permit) IsProbe() bool { return p.probe }

// Deadline returns the end of a probe permit's lease and true: the instant,
// on the breaker's clock (Settings.Now), at which the breaker re-opens as if
// the probe had failed, dated at that instant. It returns the zero Time and
// false for any other permit. A caller bounds the probe's call by it, as [Do]
// does.
func (p Permit) Deadline() (time.Time, bool) {
	if !p.probe {
		return time.Time{}, false
	}
	return p.b.at(p.at), true
}

// Success reports that the call succeeded. In Closed it zeroes the
// consecutive-failure count. In HalfOpen it closes the breaker only if p is the
// probe of the current generation and its lease has not expired; a success
// from any other permit, or while Open, is ignored.
func (p Permit) Success() {
	// Inlined: a success on a quiet closed breaker changes nothing.
	if b := p.b; b != nil && b.word.Load()&quietMask != 0 {
		p.success()
	}
}

// Failure reports that the call failed. A fresh failure counts, whatever the
// permit: it adds one to the consecutive-failure count and sets the last
// failure to now (never moving it back: see [Permit.Timeout]); it trips a closed breaker at FailureThreshold, re-opens a
// half-open one, and restarts the cooldown of an open one. A stale failure
// changes nothing: one whose call started before the call of a counted
// success (a success that reset a nonzero failure count, or the probe's
// success that closed the breaker), since a newer call has already proved the
// tool works. Calls are ordered by start coarsely, by the breaker's
// generation: two calls are told apart when a state change, the first failure
// after a clean state, or a success that reset the count came between their
// gate calls; calls that cannot be told apart are taken as fresh.
func (p Permit) Failure() {
	if p.b != nil {
		p.b.failure(p, false)
	}
}

// Timeout reports that the call gave no answer until its deadline (SEMANTICS
// §1, rev 3): a failure like [Permit.Failure], but dated at the call's start
// (p's issue by the gate) instead of now, since the tool lost the call then
// and its silence since says nothing about later. The last failure never
// moves back: it becomes the later of its old value and that date, so a trip
// caused by calls that hung since an outage that has ended is dated inside
// the outage, and when its cooldown has already passed the next call is the
// probe at once. A probe is not dated at its start: its timeout is a failure
// dated now, or at its lease end if the lease has run out (a probe cut at its
// lease, as [Do] cuts it).
func (p Permit) Timeout() {
	if p.b != nil {
		p.b.failure(p, true)
	}
}

// Cancel reports that the caller gave up: no verdict, no counter changes. If p
// holds the probe slot, the slot is released at once; the breaker stays
// HalfOpen and the next gate call becomes the probe.
func (p Permit) Cancel() {
	if p.b != nil {
		p.b.cancel(p)
	}
}

// Done settles p from a call's error: nil is a success, an error matching
// context.Canceled is a cancel, an error matching context.DeadlineExceeded is
// a timeout ([Permit.Timeout]: a failure dated at the call's start, or for a
// probe as Timeout says; a tool that hangs until the deadline is exactly what
// the breaker is for), and anything else is a failure.
func (p Permit) Done(err error) {
	switch {
	case err == nil:
		p.Success() // inlined, with its fast path
	case errors.Is(err, context.Canceled):
		p.Cancel()
	case errors.Is(err, context.DeadlineExceeded):
		p.Timeout()
	default:
		p.Failure()
	}
}

// Do runs fn through b: it takes the gate (returning the refusal, an
// [*OpenError], without calling fn), calls fn, and settles the permit with
// [Permit.Done] on fn's error. A call cut by its deadline (fn's error matches
// context.DeadlineExceeded, or fn failed after the context it ran under ended
// by its deadline) is settled as a timeout ([Permit.Timeout]): dated at the
// call's start, or for a probe cut by its lease at the lease end. If fn
// panics, the permit is settled as a failure and the panic continues.
//
// A probe's call never outlives its lease: when the gate grants the probe, fn
// runs under a context that ends at the earlier of ctx's deadline and the
// lease end (the lease remaining on the breaker's clock, applied with
// context.WithTimeout). A probe cut by its lease returns
// context.DeadlineExceeded (from a fn that honours its context) and settles as
// a failure; the breaker has re-opened at the lease end already, and the caller
// is freed then instead of hanging on. Other calls run under ctx itself.
func Do[T any](ctx context.Context, b *Breaker, fn func(context.Context) (T, error)) (T, error) {
	var p Permit
	if w := b.word.Load(); w&(modeMask|busyBit) == uint64(mClosed) {
		p = Permit{b: b, gen: w >> genShift, at: b.now()} // Allow's closed path, inlined
	} else {
		var err error
		if p, err = b.Allow(); err != nil {
			var zero T
			return zero, err
		}
	}
	// If fn panics, the deferred call finds p still armed and settles it as a
	// failure; the panic then continues (nothing recovers it). On a normal
	// return p is disarmed before it is settled, so the deferred call is a
	// nil check.
	defer p.failArmed()
	if p.probe {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.at-b.now()))
		defer cancel()
	}
	v, err := fn(ctx)
	q := p
	p.b = nil
	switch {
	case err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == context.DeadlineExceeded:
		q.Timeout() // cut by its deadline, whatever fn made of it
	case err != nil || b.word.Load()&quietMask != 0:
		q.Done(err)
	}
	return v, err
}

// failArmed settles *p as a failure unless it has been disarmed (p.b nil).
func (p *Permit) failArmed() {
	if p.b != nil {
		p.b.failure(*p, false)
	}
}

// quietMask selects the bits of Breaker.word that are all zero when the
// breaker is closed with no failure counted and no writer busy: then a success
// changes nothing.
const quietMask = modeMask | failBit | busyBit
