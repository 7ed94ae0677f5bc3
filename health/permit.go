package health

import (
	"context"
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Permit is what [Registry.Allow] hands out. It has the methods of
// [breaker.Permit]; settling it also records the call's outcome and duration
// (from the gate to the settlement, on the registry's clock) in the tool's
// [Stats], before the verdict reaches the breaker (so an OnStateChange callback
// already sees it). A cancel records nothing.
//
// Settle a Permit exactly once: a second settlement is handled by the breaker
// as described for [breaker.Permit], but is recorded in the Stats again. The
// zero Permit is valid and its methods do nothing.
type Permit struct {
	e     *entry
	p     breaker.Permit
	start int64 // registry clock at the gate
}

// Tool returns the name of the tool the permit was issued for ("" for the zero Permit).
func (p Permit) Tool() string {
	if p.e == nil {
		return ""
	}
	return p.e.name
}

// IsProbe reports whether p holds the probe slot of a half-open breaker.
func (p Permit) IsProbe() bool { return p.p.IsProbe() }

// Success records a successful call and reports it to the breaker (see
// [breaker.Permit.Success]).
func (p Permit) Success() {
	if p.e != nil {
		p.record(true)
		p.p.Success()
	}
}

// Failure records a failed call and reports it to the breaker (see
// [breaker.Permit.Failure]).
func (p Permit) Failure() {
	if p.e != nil {
		p.record(false)
		p.p.Failure()
	}
}

// Cancel reports that the caller gave up: nothing is recorded, and a probe
// slot held by p is freed (see [breaker.Permit.Cancel]).
func (p Permit) Cancel() { p.p.Cancel() }

// Done settles p from a call's error: nil is a success, an error matching
// context.Canceled is a cancel, and anything else (including
// context.DeadlineExceeded) is a failure.
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

// record adds the call to the tool's stats.
func (p Permit) record(ok bool) {
	d := time.Duration(p.e.r.now() - p.start)
	p.e.mu.Lock()
	p.e.st.record(ok, d)
	p.e.mu.Unlock()
}
