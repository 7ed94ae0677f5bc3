package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

var errShortReply = errors.New("fleet: short script reply")

// Allow is the mutating gate, with the semantics of [breaker.Breaker.Allow]
// applied to the fleet's one breaker. From the mirror, with no round trip, it
// grants a call in Closed with no failure pending and refuses while the
// mirror's cooldown (or probe lease) has not passed on the estimated store
// clock; everything else is one script call. While the store is down it
// follows the Store's [Policy].
func (b *ToolBreaker) Allow() (Permit, error) {
	if mr := b.mirror.Load(); mr.quiet {
		return Permit{b: b, gen: mr.g, at: b.s.clock.storeNow() / 1000}, nil
	}
	return b.allowSlow()
}

func (b *ToolBreaker) allowSlow() (Permit, error) {
	mr := b.mirror.Load()
	if mr.mode != Shared {
		return b.allowDown(mr)
	}
	now := b.s.clock.storeNow()
	switch mr.m {
	case 1:
		if until := mr.openUntil() * 1000; now < until {
			return Permit{}, b.refusal(breaker.Open, until-now)
		}
	case 2:
		if until := mr.leaseEnd() * 1000; now < until {
			return Permit{}, b.refusal(breaker.HalfOpen, until-now)
		}
	}
	v, err := b.script("allow", false, 0, 0)
	if err != nil {
		if mr = b.mirror.Load(); mr.mode != Shared {
			return b.allowDown(mr)
		}
		return Permit{}, nil // the store came back meanwhile: let this one through
	}
	// v: ep, v, m, g, f, lf, ps, now, granted, token, wait
	if v[8] == 1 {
		p := Permit{b: b, gen: uint64(v[3]), at: v[7], probe: v[9] != 0}
		if p.probe {
			p.at = v[6]
			p.dl = b.s.clock.toLocal(v[6] + v[16]).UnixNano() // the grant + its lease
		}
		return p, nil
	}
	return Permit{}, b.refusal(modeState(int(v[2])), v[10]*1000)
}

// allowDown is the gate while the store is down.
func (b *ToolBreaker) allowDown(mr *toolMirror) (Permit, error) {
	switch mr.mode {
	case LocalMode:
		p, wait, st := mr.local.allow(time.Now().UnixNano())
		b.touched()
		if wait > 0 {
			return Permit{}, b.refusal(st, wait)
		}
		p.b = b
		return p, nil
	case FailClosedMode:
		return Permit{}, b.refusal(breaker.Open, int64(b.s.retry))
	}
	return Permit{}, nil // FailOpen: a permit whose verdict goes nowhere
}

// touched reports a state change of the local breaker, if any.
func (b *ToolBreaker) touched() {
	if b.onChange == nil {
		return
	}
	b.mu.Lock()
	b.changed()
}

// refusal builds the soft error of a refused call that may be retried in d ns.
func (b *ToolBreaker) refusal(st breaker.State, d int64) error {
	ms := int64(time.Millisecond)
	if d < 0 {
		d = 0
	}
	return &breaker.OpenError{Name: b.name, State: st, RetryIn: time.Duration((d + ms - 1) / ms * ms)}
}

// Permit is what [ToolBreaker.Allow] hands out: the right to make one call,
// with the same methods as [breaker.Permit]. It carries the breaker's
// generation when it was issued (the start order of its call) and whether it
// holds the probe slot; the probe's generation is its fencing token: only the
// current probe's verdict can close the breaker. It also carries when it was
// issued (a timeout is dated at it: SEMANTICS §1). The zero Permit is
// valid and its methods do nothing.
type Permit struct {
	b     *ToolBreaker // nil: the zero Permit (and FailOpen's): settling does nothing
	gen   uint64       // with localBit: issued by a local breaker (see localTool)
	dl    int64        // probe: the lease end, local Unix ns
	at    int64        // issue time (a probe: its grant): store µs; local permits: local Unix ns
	probe bool
}

// IsProbe reports whether p holds the probe slot.
func (p Permit) IsProbe() bool { return p.probe }

// Deadline returns the end of the probe's lease and true for a probe permit
// (a probe's call must not outlive it), and false for any other permit.
func (p Permit) Deadline() (time.Time, bool) {
	if !p.probe {
		return time.Time{}, false
	}
	return time.Unix(0, p.dl), true
}

// Success reports that the call succeeded. A success in a quiet Closed
// breaker costs no round trip.
func (p Permit) Success() {
	if b := p.b; b != nil && (p.probe || !b.mirror.Load().quiet) {
		b.settle(p, "success", false)
	}
}

// Failure reports that the call failed: fresh bad news in every state,
// unless a success of a call that started later has been counted (a stale
// failure changes nothing). One round trip.
func (p Permit) Failure() {
	if p.b != nil {
		p.b.settle(p, "failure", false)
	}
}

// Timeout reports that the call gave no answer until its deadline, like
// [breaker.Permit.Timeout]: a failure dated at the permit's issue (on the
// store's clock) for a permit that is not the probe, never moving the last
// failure back; a probe's timeout is dated now, or at its lease end once the
// lease has run out. One round trip.
func (p Permit) Timeout() {
	if p.b != nil {
		p.b.settle(p, "timeout", false)
	}
}

// Cancel reports that the caller gave up: no verdict. A probe's slot is
// released at once (one round trip); any other cancel costs nothing.
func (p Permit) Cancel() {
	if p.b != nil && p.probe {
		p.b.settle(p, "cancel", false)
	}
}

// Done settles p from a call's error like [breaker.Permit.Done]: nil is a
// success, context.Canceled a cancel, context.DeadlineExceeded a timeout,
// anything else a failure.
func (p Permit) Done(err error) { breaker.Settle(p, err) }

// settle applies a verdict: on the store when p is shared and the store is
// up, else to the local breaker (a shared permit settled while the store is
// down counts there as a plain call; a local permit settled after the store
// came back is dropped: the store wins). With trip (breaker.OutcomeTrip: the
// process's rate window tripped, SEMANTICS §8.1) the verdict is applied and
// then a breaker still Closed trips, on the store or locally.
func (b *ToolBreaker) settle(p Permit, op string, trip bool) {
	gen, probe, at := p.gen, p.probe, p.at
	mr := b.mirror.Load()
	local := gen&localBit != 0
	if !local && mr.mode == Shared {
		if _, err := b.scriptTrip(op, probe, gen, at, trip); err == nil {
			return
		}
		mr = b.mirror.Load()
	}
	if mr.mode != LocalMode {
		return
	}
	if !local {
		at = at*1000 - b.s.clock.offset.Load() // store µs to local ns
	}
	if !local || !mr.local.issued(gen) {
		gen, probe = 0, false // a plain call of the local breaker, never its probe
	}
	now := time.Now().UnixNano()
	switch op {
	case "success", "slowprobe":
		mr.local.success(gen, probe, now, trip, op == "slowprobe")
	case "failure":
		mr.local.failure(gen, now, now, trip)
	case "timeout":
		if p.probe {
			at = p.dl // a probe: dated at its lease end at the latest (local ns)
		}
		mr.local.failure(gen, now, at, trip)
	case "cancel":
		mr.local.cancel(gen, probe, now)
	}
	b.touched()
}

// Do runs fn through b like [breaker.Do]: it takes the gate (returning the
// refusal without calling fn), calls fn under a context bounded by the probe's
// lease when the permit is the probe, and settles the permit with Done (a
// call cut by its deadline as a timeout, as breaker.Do does). If fn panics, the permit is settled as a failure and the panic continues.
func Do[T any](ctx context.Context, b *ToolBreaker, fn func(context.Context) (T, error)) (T, error) {
	p, err := b.Allow()
	if err != nil {
		var zero T
		return zero, err
	}
	if dl, ok := p.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl)
		defer cancel()
	}
	settled := false
	defer func() {
		if !settled {
			p.Failure()
		}
	}()
	v, err := fn(ctx)
	settled = true
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == context.DeadlineExceeded {
		p.Timeout() // cut by its deadline, whatever fn made of it
	} else {
		p.Done(err)
	}
	return v, err
}
