package breaker

import (
	"time"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// Backend keeps the state of breakers outside the process, so that many
// processes share one breaker per name (package fleet provides one, on
// Redis). Set it in [Settings.Backend]; nil keeps the state in process.
//
// A Breaker built with a Backend is used exactly like any other: [New] (or
// Init) calls Attach once with the validated settings, and every method of
// the Breaker and of its permits then goes to the returned [Shared]. The
// in-process fast paths never see a shared breaker: its published word keeps
// the "busy" bit set, which sends every call down the slow path, where one
// nil check picks the Shared (or, while a [QuietSource]'s word is quiet,
// grants the permit without calling it).
type Backend interface {
	// Attach returns the shared state of the breaker configured by s
	// (validated; s.Name names it). It is called once per Breaker.
	Attach(s Settings) (Shared, error)
}

// Shared is the state of one breaker kept by a [Backend]. Its methods have
// the semantics of the [Breaker] methods of the same names (SEMANTICS §1),
// applied to the one breaker the sharing processes form. It must be safe for
// concurrent use; it calls Settings.OnStateChange itself.
type Shared interface {
	// Allow is the gate: a permit, or a refusal (an [*OpenError]).
	Allow() (SharedPermit, error)
	// Settle applies the verdict of a permit that Allow returned.
	Settle(p SharedPermit, o Outcome)
	// RetryIn is 0 when the gate would grant a call now, else how long until
	// it may. It is pure.
	RetryIn() time.Duration
	// State and Snapshot are pure reads.
	State() State
	Snapshot() Snapshot
	// Reset returns the breaker to Closed.
	Reset()
	// SettleLimit applies a rate-limit verdict of a permit that Allow
	// returned: o is OutcomeRateLimited (hint not zero) or OutcomeQuota (a
	// zero hint: QuotaCooldown from now), as [Permit.RateLimited] and
	// [Permit.QuotaExhausted] say.
	SettleLimit(p SharedPermit, o Outcome, hint time.Time)
	// Reconfigure applies new settings (validated, the same Name) to the
	// shared breaker as [Breaker.Reconfigure] says: the state and n stay.
	Reconfigure(s Settings) error
}

// SharedPermit is what a [Shared] gate grants: the backend's generation of
// the permit (its start order and, for a probe, its fencing token), whether
// it is the probe, the probe's lease end (Unix nanoseconds; 0 for a permit
// that is not the probe), and when it was issued (a timeout is dated
// at it). It is small and pointer-free, so that the seam costs little.
type SharedPermit struct {
	Gen      uint64
	Deadline int64
	// Issued is when the gate granted the permit, on the backend's own clock
	// and in its own unit (fleet: the store's clock, µs). The Breaker does
	// not read it: it hands it back unchanged to [Shared.Settle].
	Issued int64
	Probe  bool
}

// Outcome is the verdict passed to [Shared.Settle].
type Outcome int

// The verdicts of a permit.
const (
	OutcomeSuccess Outcome = iota
	OutcomeFailure
	OutcomeCancel
	// OutcomeTimeout is a failure of a call that gave no answer
	// until its deadline: for a permit that is not the probe, dated at its
	// Issued time (never moving the last failure back); for the probe, dated
	// now, or at its lease end if the lease has run out ([Permit.Timeout]).
	OutcomeTimeout
	// OutcomeRateLimited is a throttle or an overload with a hint, passed to
	// [Shared.SettleLimit] only ([Permit.RateLimited]).
	OutcomeRateLimited
	// OutcomeQuota is an exhausted quota, passed to [Shared.SettleLimit]
	// only ([Permit.QuotaExhausted]).
	OutcomeQuota
	// OutcomeSlowProbe is the success of a probe permit whose first content
	// came later than SlowCallAfter (SEMANTICS §9.2): if the permit is the
	// current probe, the backend re-opens the breaker as on the probe's
	// failure (a failure counted, dated now, n + 1); any other permit's is a
	// success, applied as OutcomeSuccess.
	OutcomeSlowProbe
	// OutcomeTrip is a flag, OR'ed onto OutcomeSuccess,
	// OutcomeFailure or OutcomeTimeout: after this verdict the failure-rate
	// window of this process tripped (SEMANTICS §8.1, §8.2; with a Backend
	// the window is kept per process, docs/FLEET.md). The backend applies the
	// verdict as it would without the flag and then, if the shared state is
	// still Closed (and a failure counted: it was not stale), trips it as on
	// FailureThreshold, so that every sharing process opens as one. A slow
	// success that tripped is OutcomeSuccess|OutcomeTrip: a counted success,
	// then a trip dated now.
	OutcomeTrip Outcome = 1 << 3
)

// sharedWindow records verdict o of p in this process's window of a shared
// breaker (§8.1: kept per process) and reports whether it trips. Only
// permits that are not the probe count, while the shared state reads Closed;
// another state clears the window (the transitions the backend reports
// clear it too: see Init).
func (b *Breaker) sharedWindow(p Permit, o ratewindow.Outcome) bool {
	r := b.rate.Load()
	if r == nil || p.probe {
		return false
	}
	if b.shared.State() != Closed {
		r.win.Reset()
		return false
	}
	return r.win.Record(b.now(), o, r.rule)
}

// sharedSuccess is successAfter for a shared breaker. A probe slower than
// SlowCallAfter is a failure for the breaker (§9.2).
func (b *Breaker) sharedSuccess(p Permit, ttfc int64) {
	if slow := b.slowPass.Load(); p.probe && slow > 0 && ttfc > slow {
		b.sharedSettle(p, OutcomeSlowProbe)
		return
	}
	if r := b.rate.Load(); r != nil && b.sharedWindow(p, r.kind(ttfc)) {
		b.sharedSettle(p, OutcomeSuccess|OutcomeTrip) // §8.2
		return
	}
	if !b.quietSuccess(p) {
		b.sharedSettle(p, OutcomeSuccess)
	}
}

// sharedFailure is failure for a shared breaker.
func (b *Breaker) sharedFailure(p Permit, timeout bool) {
	o := OutcomeFailure
	if timeout {
		o = OutcomeTimeout
	}
	if b.sharedWindow(p, ratewindow.Failure) {
		o |= OutcomeTrip
	}
	b.sharedSettle(p, o)
}

// sharedWord is the published word of a shared breaker: busy forever, so
// that every lock-free path falls through to a slow path.
const sharedWord = busyBit | 1<<genShift

// sharedAllow is Allow for a shared breaker.
func (b *Breaker) sharedAllow() (Permit, error) {
	if p, ok := b.quietAllow(); ok {
		return p, nil
	}
	sp, err := b.shared.Allow()
	if err != nil {
		return Permit{}, err
	}
	p := Permit{b: b, gen: sp.Gen, at: sp.Issued, probe: sp.Probe}
	if sp.Probe {
		p.at = int64(time.Unix(0, sp.Deadline).Sub(b.epoch))
	}
	return p, nil
}

// sharedSettle passes the verdict of p to the shared state, with what the
// backend gave the permit: a probe's lease end, or a permit's issue time.
func (b *Breaker) sharedSettle(p Permit, o Outcome) {
	sp := SharedPermit{Gen: p.gen, Probe: p.probe, Issued: p.at}
	if p.probe {
		sp.Issued, sp.Deadline = 0, b.at(p.at).UnixNano()
	}
	b.shared.Settle(sp, o)
}
