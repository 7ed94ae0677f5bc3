package fallback

import "time"

// Backend keeps the state of a model breaker outside the process, so that
// many processes share one breaker (package fleet provides one, on Redis).
// Set it in [Settings.Backend]; nil keeps the state in process.
//
// A Manager built with a Backend is used exactly like any other: [New] calls
// Attach once with the validated settings, and every method of the Manager
// and of its turns then goes to the returned [Shared]. The in-process fast
// paths never see a shared manager (its published word routes every call to
// a slow path, where one nil check picks the Shared).
type Backend interface {
	// Attach returns the shared state of the manager configured by s
	// (validated). It is called once per Manager.
	Attach(s Settings) (Shared, error)
}

// Shared is the state of one model breaker kept by a [Backend]. Its methods
// have the semantics of the [Manager] and [Turn] methods of the same names
// (SEMANTICS §3), applied to the one breaker the sharing processes form. It
// must be safe for concurrent use; it calls Settings.OnTransition itself.
type Shared interface {
	// Begin is the gate: a ticket, or ErrExhausted (an [*ExhaustedError]).
	Begin() (SharedTurn, error)
	// Settle applies the verdict of a ticket that Begin returned; k is the
	// kind of a failure.
	Settle(t SharedTurn, o Outcome, k Kind)
	// ActiveModel, State, FallbackActivated and Snapshot are pure reads.
	ActiveModel() string
	State() State
	FallbackActivated() bool
	Snapshot() Snapshot
	// SetAvailable and Reset are as on Manager.
	SetAvailable(model string, available bool) error
	Reset()
}

// SharedTurn is what a [Shared] gate grants: the backend's generation and
// chain-budget epoch when it was issued, the probe's number (0: not the
// probe; it must fit in 32 bits), the chain entry that serves it (-1: the primary) and the probe's
// lease end.
type SharedTurn struct {
	Gen, Epoch, Probe uint64
	Entry             int
	Deadline          time.Time
}

// Outcome is the verdict passed to [Shared.Settle].
type Outcome int

// The verdicts of a ticket.
const (
	OutcomeSuccess Outcome = iota
	OutcomeFailure
	OutcomeCancel
)

// sharedBegin is Begin for a shared manager.
func (m *Manager) sharedBegin() (Turn, error) {
	st, err := m.shared.Begin()
	if err != nil {
		return Turn{}, err
	}
	s := m.takeSlot()
	t := Turn{m: m, slot: s, seq: s.seq.Load(), gen: st.Gen, epoch: st.Epoch, who: serving(st.Entry, uint32(st.Probe))}
	if st.Probe != 0 {
		t.end = int64(st.Deadline.Sub(m.epoch))
	}
	return t, nil
}

// sharedSettle passes the first settlement of t to the shared state.
func (m *Manager) sharedSettle(t Turn, v verdict, k Kind) {
	if !t.slot.seq.CompareAndSwap(t.seq, t.seq+1) {
		return // settled before
	}
	m.slots.Put(t.slot)
	o := OutcomeSuccess
	switch v {
	case failure:
		o = OutcomeFailure
	case cancel:
		o = OutcomeCancel
	}
	m.shared.Settle(SharedTurn{Gen: t.gen, Epoch: t.epoch, Probe: uint64(t.probe()), Entry: t.entry()}, o, k)
}
