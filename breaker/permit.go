package breaker

import (
	"context"
	"errors"
	"time"
)

// Permit is what [Breaker.Allow] hands out: the right to make one call. It
// remembers the generation it was issued in (which orders the call's start),
// whether it holds the probe slot, and the probe's lease end. Settle it
// exactly once with Success, SuccessAfter, Failure, Timeout, TimeoutAfter,
// Cancel, Done or DoneAfter. Settling it again is harmless where the breaker
// can tell (a second success or cancel of a probe permit does nothing, since
// every probe grant starts a new generation), but a second Failure counts as
// another failure (unless it is stale).
//
// A Permit is a small value: copy it freely. The zero Permit (as returned with
// a refusal) is valid and all its methods do nothing.
type Permit struct {
	b     *Breaker
	gen   uint64 // the generation at the gate: also the call's start order
	at    int64  // a probe's lease end, else its generation's start (clock offsets; shared: see sharedAllow)
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
// from any other permit, or while Open, is ignored. With a rate window
// (Settings.FailureRate or the slow-call rule) a success in Closed is counted
// in the window, never as slow: report a call's time to first content with
// [Permit.SuccessAfter].
//
// Without a rate window, a success in a closed breaker with no failure
// counted reads no clock, takes no lock and allocates nothing (§8.4).
func (p Permit) Success() {
	// Inlined: a success on a quiet closed breaker changes nothing.
	if b := p.b; b != nil && b.word.Load()&quietMask != 0 {
		p.success()
	}
}

// SuccessAfter reports that the call succeeded and that its first content
// (for a streamed answer the first content chunk, for a whole answer the
// answer) came firstContent after the call's start (SEMANTICS §8.2). With
// Settings.SlowCallAfter and SlowCallRate set and firstContent above
// SlowCallAfter, the call is a slow success: a success for every rule (as
// [Permit.Success]), and a slow call in the rate window; in Closed the
// breaker trips when slow calls / verdicts reaches SlowCallRate with at least
// RateMinCalls verdicts, as on the consecutive threshold (dated now, the
// cooldown from now). Without the slow-call rule it is Success.
func (p Permit) SuccessAfter(firstContent time.Duration) {
	if b := p.b; b != nil && b.word.Load()&quietMask != 0 {
		p.successAfter(int64(firstContent))
	}
}

// Failure reports that the call failed. A fresh failure counts, whatever the
// permit: it adds one to the consecutive-failure count and sets the last
// failure to now (never moving it back: see [Permit.Timeout]); it trips a
// closed breaker at FailureThreshold, or by the rate window (§8.1), re-opens
// a half-open one, and restarts the cooldown of an open one. A stale failure
// changes nothing (not even the rate window): one whose call started before
// the call of a counted success (a success that reset a nonzero failure
// count, or the probe's success that closed the breaker), since a newer call
// has already proved the tool works. Calls are ordered by start coarsely, by
// the breaker's generation: two calls are told apart when a state change, the
// first failure after a clean state, or a success that reset the count came
// between their gate calls; calls that cannot be told apart are taken as
// fresh.
func (p Permit) Failure() {
	if p.b != nil {
		p.b.failure(p, false, -1)
	}
}

// TimeoutAfter reports that the call gave no answer until its deadline, after
// running for ran (SEMANTICS §1, §8.4): a failure like
// [Permit.Failure], dated at its start, now − ran, instead of now, since the
// tool lost the call then and its silence since says nothing about later. The
// last failure never moves back: it becomes the later of its old value and
// that date, so a trip caused by calls that hung since an outage that has
// ended is dated inside the outage, and when its cooldown has already passed
// the next call is the probe at once. The caller times the call (the gate
// reads no clock in Closed); a negative ran counts as 0. A probe is not dated
// at its start: its timeout is a failure dated now, or at its lease end if
// the lease has run out (a probe cut at its lease, as [Do] cuts it).
func (p Permit) TimeoutAfter(ran time.Duration) {
	if p.b != nil {
		p.b.failure(p, true, durationNs(ran))
	}
}

// Timeout is [Permit.TimeoutAfter] for a caller that did not time the call:
// the timeout is dated at the earliest instant the call may have started, the
// beginning of the breaker generation p was issued in (the last state change,
// counted success that reset the count, first failure after a clean state,
// or the breaker's creation), never later than the call's start. Prefer
// TimeoutAfter, which dates it exactly. A probe is dated as TimeoutAfter
// says.
func (p Permit) Timeout() {
	if p.b != nil {
		p.b.failure(p, true, -1)
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
// a timeout ([Permit.Timeout]: a failure dated at the call's start at the
// earliest, or for a probe as Timeout says; a tool that hangs until the
// deadline is exactly what the breaker is for), and anything else is a
// failure. [Permit.DoneAfter] dates a timeout exactly.
func (p Permit) Done(err error) { Settle(p, err) }

// A Settler is a permit with the four verdicts: a [Permit], or the permit
// of a package built on breaker (health's, fleet's).
type Settler interface {
	Success()
	Cancel()
	Timeout()
	Failure()
}

// Settle settles p from a call's error in the one shape every permit's Done
// has: nil is a success, an error matching context.Canceled a cancel, one
// matching context.DeadlineExceeded a timeout, and anything else a failure.
// [Permit.Done] is Settle (a success keeps its inlined fast path).
func Settle[P Settler](p P, err error) {
	switch {
	case err == nil:
		p.Success()
	case errors.Is(err, context.Canceled):
		p.Cancel()
	case errors.Is(err, context.DeadlineExceeded):
		p.Timeout()
	default:
		p.Failure()
	}
}

// DoneAfter is [Permit.Done] for a call that ran for ran until its answer
// (or its error): nil is [Permit.SuccessAfter](ran) (a whole answer's first
// content is the answer), context.DeadlineExceeded is
// [Permit.TimeoutAfter](ran), and the rest as Done.
func (p Permit) DoneAfter(err error, ran time.Duration) {
	p.doneAfter(err, int64(ran))
}

// doneAfter is DoneAfter with ran in ns; negative: not timed (Done).
func (p Permit) doneAfter(err error, ran int64) {
	switch {
	case err == nil:
		if b := p.b; b != nil && b.word.Load()&quietMask != 0 {
			p.successAfter(ran)
		}
	case errors.Is(err, context.Canceled):
		p.Cancel()
	case errors.Is(err, context.DeadlineExceeded):
		if p.b != nil {
			p.b.failure(p, true, ran)
		}
	default:
		p.Failure()
	}
}

// Do runs fn through b: it takes the gate (returning the refusal, an
// [*OpenError], without calling fn), calls fn, and settles the permit with
// [Permit.DoneAfter] on fn's error. A call cut by its deadline (fn's error
// matches context.DeadlineExceeded, or fn failed after the context it ran
// under ended by its deadline) is settled as a timeout: dated at the call's
// start, or for a probe cut by its lease at the lease end. Do times fn (one
// clock read before, one after) only when it needs to: when ctx has a
// deadline, to date a timeout ([Permit.TimeoutAfter]), with the slow-call
// rule on, to tell a slow success ([Permit.SuccessAfter]: fn's whole answer is
// its first content), and for the probe with SlowCallAfter set, since a slow
// probe re-opens the breaker (its answer is still returned). If fn panics, the
// permit is settled as a failure and the panic continues.
//
// A probe's call never outlives its lease: when the gate grants the probe, fn
// runs under a context that ends at the earlier of ctx's deadline and the
// lease end (the lease remaining on the breaker's clock, applied with
// context.WithTimeout). A probe cut by its lease returns
// context.DeadlineExceeded (from a fn that honours its context) and settles as
// a failure; the breaker has re-opened at the lease end already, and the caller
// is freed then instead of hanging on. Other calls run under ctx itself.
func Do[T any](ctx context.Context, b *Breaker, fn func(context.Context) (T, error)) (T, error) {
	w := b.word.Load()
	if w&(modeMask|busyBit) != uint64(mClosed) {
		return doGated(ctx, b, fn)
	}
	p := Permit{b: b, gen: w >> genShift, at: b.genAt.Load()} // Allow's closed path, inlined
	start := int64(-1)
	if _, ok := ctx.Deadline(); b.timed(ok, false) {
		start = b.now()
	}
	// If fn panics, the deferred call finds p still armed and settles it as a
	// failure; the panic then continues (nothing recovers it). On a normal
	// return p is disarmed before it is settled, so the deferred call is a
	// nil check.
	defer p.failArmed()
	v, err := fn(ctx)
	q := p
	p.b = nil
	if err != nil || b.word.Load()&quietMask != 0 {
		q.settle(ctx, err, start)
	}
	return v, err
}

// doGated is Do past the closed fast path: the gate, and for the probe a
// context bounded by its lease.
func doGated[T any](ctx context.Context, b *Breaker, fn func(context.Context) (T, error)) (T, error) {
	p, err := b.Allow()
	if err != nil {
		var zero T
		return zero, err
	}
	start := int64(-1)
	if p.probe {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.at-b.now()))
		defer cancel()
	}
	if _, ok := ctx.Deadline(); b.timed(ok && !p.probe, p.probe) {
		start = b.now()
	}
	return run(ctx, p, start, fn)
}

// run calls fn for permit p, timed from clock offset start (negative: not
// timed), and settles p on fn's error (see [Permit.settle]).
func run[T any](ctx context.Context, p Permit, start int64, fn func(context.Context) (T, error)) (T, error) {
	defer p.failArmed() // as in Do
	v, err := fn(ctx)
	q := p
	p.b = nil
	q.settle(ctx, err, start)
	return v, err
}

// settle settles p on the error of a call run under ctx, timed from clock
// offset start (negative: not timed), with [Permit.DoneAfter]; a call cut by
// its deadline is a timeout, whatever fn made of it.
func (p Permit) settle(ctx context.Context, err error, start int64) {
	b := p.b
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == context.DeadlineExceeded {
		err = context.DeadlineExceeded
	}
	p.doneAfter(err, b.ranSince(start))
}

// failArmed settles *p as a failure unless it has been disarmed (p.b nil).
func (p *Permit) failArmed() {
	if p.b != nil {
		p.b.failure(*p, false, -1)
	}
}

// quietMask selects the bits of Breaker.word that are all zero when the
// breaker is closed with no failure counted, no writer busy and no rate
// window: then a success changes nothing.
const quietMask = modeMask | failBit | busyBit | rateBit
