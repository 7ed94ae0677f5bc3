package breaker

import "time"

// Backend keeps the state of breakers outside the process, so that many
// processes share one breaker per name (package fleet provides one, on
// Redis). Set it in [Settings.Backend]; nil keeps the state in process.
//
// A Breaker built with a Backend is used exactly like any other: [New] (or
// Init) calls Attach once with the validated settings, and every method of
// the Breaker and of its permits then goes to the returned [Shared]. The
// in-process fast paths never see a shared breaker: its published word keeps
// the "busy" bit set, which sends every call down the slow path, where one
// nil check picks the Shared.
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
}

// SharedPermit is what a [Shared] gate grants: the backend's generation of
// the permit (its start order and, for a probe, its fencing token), whether
// it is the probe, the probe's lease end (Unix nanoseconds; 0 for a permit
// that is not the probe), and when it was issued (rev 3: a timeout is dated
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
	// OutcomeTimeout (rev 3) is a failure of a call that gave no answer
	// until its deadline: for a permit that is not the probe, dated at its
	// Issued time (never moving the last failure back); for the probe, dated
	// now, or at its lease end if the lease has run out ([Permit.Timeout]).
	OutcomeTimeout
)

// sharedWord is the published word of a shared breaker: busy forever, so
// that every lock-free path falls through to a slow path.
const sharedWord = busyBit | 1<<genShift

// sharedAllow is Allow for a shared breaker.
func (b *Breaker) sharedAllow() (Permit, error) {
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
