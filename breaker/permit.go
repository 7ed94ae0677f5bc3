package breaker

import (
	"context"
	"errors"
)

// Permit is what [Breaker.Allow] hands out: the right to make one call. It
// remembers the generation it was issued in and whether it holds the probe
// slot. Settle it exactly once with Success, Failure, Cancel or Done. Settling
// it again is harmless where the breaker can tell (a second success or cancel
// of a probe permit does nothing, since every probe grant starts a new
// generation), but a second Failure counts as another failure.
//
// A Permit is a small value: copy it freely. The zero Permit (as returned with
// a refusal) is valid and all its methods do nothing.
type Permit struct {
	b     *Breaker
	gen   uint64
	probe bool
}

// IsProbe reports whether p holds the probe slot of a half-open breaker: its
// success is the one that closes the breaker.
func (p Permit) IsProbe() bool { return p.probe }

// Success reports that the call succeeded. In Closed it zeroes the
// consecutive-failure count. In HalfOpen it closes the breaker only if p is the
// probe of the current generation and its lease has not expired; a success
// from any other permit, or while Open, is ignored.
func (p Permit) Success() {
	if p.b != nil {
		p.b.success(p)
	}
}

// Failure reports that the call failed. Every failure counts, whatever the
// permit: it adds one to the consecutive-failure count and sets the last
// failure to now; it trips a closed breaker at FailureThreshold, re-opens a
// half-open one, and restarts the cooldown of an open one.
func (p Permit) Failure() {
	if p.b != nil {
		p.b.failure()
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
// context.Canceled is a cancel, and anything else (including
// context.DeadlineExceeded: a tool that hangs until the deadline is exactly
// what the breaker is for) is a failure.
func (p Permit) Done(err error) {
	switch {
	case err == nil:
		p.Success()
	case errors.Is(err, context.Canceled):
		p.Cancel()
	default:
		p.Failure()
	}
}

// Do runs fn through b: it takes the gate (returning the refusal, an
// [*OpenError], without calling fn), calls fn(ctx), and settles the permit with
// [Permit.Done] on fn's error. If fn panics, the permit is settled as a failure
// and the panic continues.
func Do[T any](ctx context.Context, b *Breaker, fn func(context.Context) (T, error)) (T, error) {
	p, err := b.Allow()
	if err != nil {
		var zero T
		return zero, err
	}
	settled := false
	defer func() {
		if !settled {
			p.Failure()
		}
	}()
	v, err := fn(ctx)
	settled = true
	p.Done(err)
	return v, err
}
