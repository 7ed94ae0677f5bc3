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

// Deadline returns the end of a probe permit's lease and true (see
// [breaker.Permit.Deadline]); the zero Time and false for any other permit.
func (p Permit) Deadline() (time.Time, bool) { return p.p.Deadline() }

// Success records a successful call and reports it to the breaker (see
// [breaker.Permit.Success]).
func (p Permit) Success() {
	if p.e != nil {
		p.record(true)
		p.p.Success()
	}
}

// SuccessAfter records a successful call and reports it to the breaker with
// its time to first content (SEMANTICS §8.2; see
// [breaker.Permit.SuccessAfter]): for a streamed answer the time from the
// call's start to its first content chunk, for a whole answer the time to the
// answer. With the breaker's slow-call rule on (Settings.SlowCallAfter and
// SlowCallRate), a success whose first content came after SlowCallAfter is a
// slow call; with SlowCallAfter set, a probe's success after it re-opens the
// breaker (SEMANTICS §9.2: the call was served, and is a success in the
// Stats). The Stats record it as Success does (the duration from the gate to
// the settlement).
func (p Permit) SuccessAfter(firstContent time.Duration) {
	if p.e != nil {
		p.record(true)
		p.p.SuccessAfter(firstContent)
	}
}

// successTimed records a success whose whole answer is its first content: the
// breaker is told the duration the Stats record.
func (p Permit) successTimed() {
	if p.e != nil {
		p.p.SuccessAfter(p.record(true))
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

// Timeout records a failed call that gave no answer until its deadline and
// reports it to the breaker as a timeout (see [breaker.Permit.Timeout]: dated
// at the call's start, a probe at its lease end at the latest). The Stats
// record it like any failure.
func (p Permit) Timeout() {
	if p.e != nil {
		p.p.TimeoutAfter(p.record(false)) // §8.4: the breaker is told how long it ran
	}
}

// Cancel reports that the caller gave up: nothing is recorded, and a probe
// slot held by p is freed (see [breaker.Permit.Cancel]).
func (p Permit) Cancel() { p.p.Cancel() }

// Done settles p from a call's error: nil is a success, an error matching
// context.Canceled is a cancel, an error matching context.DeadlineExceeded is
// a timeout ([Permit.Timeout]), and anything else is a failure.
func (p Permit) Done(err error) { breaker.Settle(p, err) }

// DoneAfter is [Permit.Done] for a call whose first content came
// firstContent after its start: nil is [Permit.SuccessAfter](firstContent),
// and the rest as Done (a timeout is timed by the permit itself, from the
// gate).
func (p Permit) DoneAfter(err error, firstContent time.Duration) {
	if err == nil {
		p.SuccessAfter(firstContent)
		return
	}
	p.Done(err)
}

// record adds the call to the tool's stats and returns its duration.
func (p Permit) record(ok bool) time.Duration {
	d := time.Duration(p.e.r.now() - p.start)
	p.e.mu.Lock()
	p.e.st.record(ok, d)
	p.e.mu.Unlock()
	return d
}

// Do runs fn as one call of tool through r, like [breaker.Do]: it takes the
// gate ([Registry.Allow], creating the tool on first use) and returns the
// refusal, a [*breaker.OpenError], without calling fn; otherwise it calls fn
// and settles the permit with [Permit.Done] on fn's error, which records the
// call in the tool's [Stats]; a success is reported to the breaker with its
// duration as its time to first content (fn's whole answer is its first
// content, §8.2, as in breaker.Do). If fn panics, the call is settled as a failure
// and the panic continues.
//
// A probe's call never outlives its lease: fn then runs under a context that
// ends at the earlier of ctx's deadline and the lease end (the lease remaining
// on the registry's clock, applied with context.WithTimeout), so a probe cut by
// its lease settles as a failure dated at the lease end and frees the caller
// then. Other calls run under ctx itself; one cut by its deadline (fn's error
// matches context.DeadlineExceeded, or fn failed after ctx ended by its
// deadline) settles as a timeout, dated at the call's start.
//
// To route first, resolve the tool with a [Router] and pass the resolved name.
func Do[T any](ctx context.Context, r *Registry, tool string, fn func(context.Context) (T, error)) (T, error) {
	p, err := r.Allow(tool)
	if err != nil {
		var zero T
		return zero, err
	}
	// As in breaker.Do: a panic finds p still armed and settles it as a
	// failure; on a normal return p is disarmed before it is settled.
	defer p.failArmed()
	if end, ok := p.p.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.until(end))
		defer cancel()
	}
	v, err := fn(ctx)
	q := p
	p.e = nil
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == context.DeadlineExceeded {
		q.Timeout() // cut by its deadline, whatever fn made of it
	} else if err == nil {
		q.successTimed()
	} else {
		q.Done(err)
	}
	return v, err
}

// failArmed settles *p as a failure unless it has been disarmed (p.e nil).
func (p *Permit) failArmed() {
	if p.e != nil {
		p.Failure()
	}
}
