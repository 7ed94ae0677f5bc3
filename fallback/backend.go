package fallback

import (
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

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
// have the semantics of the [Manager] and [Ticket] methods of the same names
// (SEMANTICS §3), applied to the one breaker the sharing processes form. It
// must be safe for concurrent use; it calls Settings.OnTransition itself.
type Shared interface {
	// Begin is the gate: a ticket, or ErrExhausted (an [*ExhaustedError]).
	Begin() (SharedTurn, error)
	// Next is Begin for a turn with memory ([Manager.Next]): probed
	// says the turn has held a probe ticket (it never gets the probe slot
	// again; with the chain spent or empty it is refused), slow(i) whether
	// model i failed the turn slowly (0: the primary, i+1: chain entry i),
	// routed past in chain order. A chain entry serving a turn in Primary is
	// marked Uncounted.
	Next(probed bool, slow func(model int) bool) (SharedTurn, error)
	// Usable is the pure read of Next: whether it would now route the turn
	// to a model that has not failed it slowly.
	Usable(probed bool, slow func(model int) bool) bool
	// Hedge issues a ticket for the first chain entry that is not failed,
	// not slow (slow(i+1)) and not skip; false if none. It applies the lazy
	// lease expiry but no cooldown; the Manager keeps the hedge budget.
	Hedge(slow func(model int) bool, skip int) (SharedTurn, bool)
	// Settle applies the verdict of a ticket that Begin, Next or Hedge
	// returned; f is a failure's report (kind, hint, timeout: a timeout of a
	// ticket that is not the probe is dated at t.Issued, which the Manager
	// sets to now − f.Elapsed when the caller reported it). o may be
	// OutcomeTrip: the failure, and a trip.
	Settle(t SharedTurn, o Outcome, f Failure)
	// ActiveModel, State, FallbackActivated and Snapshot are pure reads.
	ActiveModel() string
	State() State
	FallbackActivated() bool
	Snapshot() Snapshot
	// SetAvailable and Reset are as on Manager.
	SetAvailable(model string, available bool) error
	Reset()
	// Hold, Release and Disable are as on Manager (SEMANTICS §8.5):
	// state like a trip's, written where the state is kept, so that every
	// sharing process routes by them. A hold's or a disable's end is
	// computed on the backend's clock from the time left until until
	// (until.Sub(time.Now())), so that it ends at one instant for every
	// process; Snapshot shows them (the hold's and the disables' ends and
	// reasons). A backend that cannot reach its store applies them to the
	// state it serves meanwhile and re-reads the shared ones when it can.
	// Disable's model is a chain entry (the Manager checked it).
	Hold(until time.Time, reason string)
	Release()
	Disable(model string, until time.Time, reason string) error
	// Reconfigure gives the shared breaker new settings for this process
	// (s is validated and has the same primary and chain; the Manager has
	// already taken the numbers it keeps itself). It keeps the shared state
	// and writes nothing.
	Reconfigure(s Settings) error
}

// SharedTurn is what a [Shared] gate grants: the backend's generation and
// chain-budget epoch when it was issued, the probe's number (0: not the
// probe; it must fit in 32 bits), the chain entry that serves it (-1: the
// primary), the probe's lease end, the issue time (on the local clock,
// as Settings.Now would read it) and whether its verdict counts nothing
// (Uncounted: a chain entry serving a turn in Primary; the Manager then does
// not call Settle).
type SharedTurn struct {
	Gen, Epoch, Probe uint64
	Entry             int
	Deadline          time.Time
	Issued            time.Time
	Uncounted         bool
}

// Outcome is the verdict passed to [Shared.Settle].
type Outcome int

// The verdicts of a ticket.
const (
	OutcomeSuccess Outcome = iota
	OutcomeFailure
	OutcomeCancel
	// OutcomeTrip is a failure of the primary's own turn after which
	// the failure-rate window of this process trips (SEMANTICS §8.1, §8.2;
	// the window is kept per process, docs/FLEET.md): the backend counts the
	// failure as OutcomeFailure does and, if it counts (the state is Primary
	// and the ticket is not stale), trips the primary as on the
	// TripThreshold-th consecutive failure, so the fleet opens as one. A slow
	// success that trips the window is sent as OutcomeTrip with a zero
	// Failure. For the probe's ticket, OutcomeTrip is a probe whose first
	// content came later than SlowCallAfter (SEMANTICS §9.2): the backend
	// re-opens at once, Recovering → Fallback, raising the trip count, as
	// the Manager does in process.
	OutcomeTrip
)

// attachSettings is s as a Backend's Attach sees it: OnTransition also
// clears this process's failure-rate window on every transition out of (and
// into) Primary that the backend reports, before the caller's callback
// (SEMANTICS §8.1: a recovered breaker starts with an empty window). It
// wraps it whatever the settings, since Reconfigure may turn the window on
// later.
func (m *Manager) attachSettings(s Settings) Settings {
	user := s.OnTransition
	s.OnTransition = func(t Transition) {
		if t.From == Primary || t.To == Primary {
			if w := m.win.Load(); w != nil {
				w.Reset()
			}
		}
		if user != nil {
			user(t)
		}
	}
	return s
}

// sharedBegin is Begin (a clean) or Next for a shared manager.
func (m *Manager) sharedBegin(a *Attempts) (Ticket, error) {
	var (
		st  SharedTurn
		err error
	)
	if a.clean() {
		st, err = m.shared.Begin()
	} else {
		st, err = m.shared.Next(a.probed.Load(), a.slow)
	}
	if err != nil {
		var e *ExhaustedError
		if a != nil && a.probed.Load() && errors.As(err, &e) {
			e.Probed = true
			e.ProbeFailure, _ = a.probeFailure()
		}
		return Ticket{}, err
	}
	if st.Probe != 0 && a != nil {
		a.probed.Store(true)
	}
	return m.sharedTurn(st, a), nil
}

// sharedTurn wraps a shared ticket of the turn a.
func (m *Manager) sharedTurn(st SharedTurn, a *Attempts) Ticket {
	s := m.takeSlot(a)
	t := Ticket{m: m, slot: s, seq: s.seq.Load(), gen: st.Gen, epoch: st.Epoch, who: serving(st.Entry, uint32(st.Probe))}
	if st.Uncounted {
		t.epoch = noEpoch
	}
	if st.Probe != 0 {
		t.at = int64(st.Deadline.Sub(m.epoch) - time.Duration(m.tuning.probeTimeout.Load()))
	} else {
		t.at = int64(st.Issued.Sub(m.epoch))
	}
	return t
}

// sharedHedge is Hedge for a shared manager.
func (m *Manager) sharedHedge(a *Attempts, skip int) (Ticket, bool) {
	if !m.hedges.Spend() {
		return Ticket{}, false
	}
	st, ok := m.shared.Hedge(a.slow, skip)
	if !ok {
		m.hedges.Refund() // spent for nothing
		return Ticket{}, false
	}
	return m.sharedTurn(st, a), true
}

// sharedSettle passes the first settlement of t to the shared state.
func (m *Manager) sharedSettle(t Ticket, v verdict, f Failure) {
	if !t.slot.seq.CompareAndSwap(t.seq, t.seq+1) {
		return // settled before
	}
	a := t.slot.a.Load()
	m.release(t.slot)
	if a != nil && v == failure {
		a.record(&t, f)
	}
	if t.epoch == noEpoch && t.entry() >= 0 {
		return // counts nothing
	}
	o := OutcomeSuccess
	switch v {
	case failure:
		o = OutcomeFailure
	case cancel:
		o = OutcomeCancel
	case slowProbe:
		o = OutcomeTrip // a slow probe re-opens at once (§9.2)
	}
	st := SharedTurn{Gen: t.gen, Epoch: t.epoch, Probe: uint64(t.probe()), Entry: t.entry(),
		Issued: m.epoch.Add(time.Duration(t.at))}
	if f.Timeout && f.Elapsed > 0 && v == failure {
		clk := m.clock()
		st.Issued = clk.now().Add(-f.Elapsed) // dated at the call's start (§8.4)
	}
	if m.sharedWindow(&t, v) {
		o = OutcomeTrip
	}
	m.shared.Settle(st, o, f)
}

// sharedWindow counts verdict v of t in this process's window (§8.1: with
// a Backend the window is kept per process) and reports whether it trips.
// Only the primary's own turns count, while the shared state is Primary; a
// state other than Primary clears the window, as does every transition out
// of or into Primary that the backend reports (attachSettings).
func (m *Manager) sharedWindow(t *Ticket, v verdict) bool {
	win := m.win.Load()
	if win == nil || t.entry() >= 0 || t.probe() != 0 || v == cancel {
		return false
	}
	if m.shared.State() != Primary {
		win.Reset()
		return false
	}
	o := ratewindow.Success
	switch v {
	case failure:
		o = ratewindow.Failure
	case slowSuccess:
		o = ratewindow.SlowSuccess
	}
	clk := m.clock()
	return win.Record(int64(clk.sinceEpoch()), o, *m.tuning.rule.Load())
}
