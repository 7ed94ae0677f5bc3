package fleet

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// ModelBackend returns a [fallback.Backend] that keeps the model breaker
// built with it in this Store, shared by the fleet under name: set it as
// fallback.Settings.Backend, and fallback.New returns a *fallback.Manager
// that the agent (agent.Config.Models) and the gateway (its NewManager
// hook) use unchanged. Managers attached under one name in one Store share
// one [ModelBreaker].
func (s *Store) ModelBackend(name string) fallback.Backend { return modelBackend{s, name} }

type modelBackend struct {
	s    *Store
	name string
}

// Attach returns the shared model breaker.
func (mb modelBackend) Attach(fs fallback.Settings) (fallback.Shared, error) {
	fs.Backend = nil
	s := mb.s
	for range 2 { // a concurrent Attach may register the name first
		s.mu.Lock()
		if m, ok := s.members[s.key("model", mb.name)+":ch"].(*ModelBreaker); ok {
			if m.attached >= 0 {
				m.attached++
			}
			s.mu.Unlock()
			return &modelShared{m: m}, nil
		}
		s.mu.Unlock()
		m, err := s.model(mb.name, fs, 1)
		if errors.Is(err, errDuplicate) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &modelShared{m: m}, nil
	}
	return nil, errors.New("fleet: model breaker " + mb.name + " registered and forgotten meanwhile")
}

// Release says that one Manager attached under the backend's name is no
// longer used (the gateway calls it when it evicts a direct upstream/model
// name): once every Manager attached through ModelBackend is released, the
// Store forgets the breaker (no mirror, no messages routed to it). The
// state in the store stays, and a later Attach under the name reads it.
// A breaker made with [Store.Model] itself is never forgotten.
func (mb modelBackend) Release() {
	s := mb.s
	ch := s.key("model", mb.name) + ":ch"
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.members[ch].(*ModelBreaker); ok && m.attached > 0 {
		if m.attached--; m.attached == 0 {
			delete(s.members, ch)
		}
	}
}

// ErrNotAttached is the error of a ModelBackend's Operate when no Manager
// is attached under its name (none was built with it, or every one was
// released).
var ErrNotAttached = errors.New("fleet: no model breaker attached under the name")

// Operate applies an operator's act to the shared model breaker attached
// under the backend's name, as [ModelBreaker.Operate]: the way a caller that
// holds only the Backend it gave fallback.Settings (the gateway's admin API)
// has the act's reason reach every process's Transition, also for an enable
// and a reset, which take none through the Manager. A name with no Manager
// attached is an error matching [ErrNotAttached].
func (mb modelBackend) Operate(action, entry, reason string, until time.Time) error {
	s := mb.s
	s.mu.Lock()
	m, ok := s.members[s.key("model", mb.name)+":ch"].(*ModelBreaker)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotAttached, mb.name)
	}
	return m.Operate(action, entry, reason, until)
}

// modelShared adapts a ModelBreaker to fallback.Shared. Tickets issued by the
// local manager while the store is down are kept in a table under an id
// carried in the ticket's generation (with localBit).
type modelShared struct {
	m      *ModelBreaker
	ids    atomic.Uint64
	locals sync.Map // id -> Turn
}

func (a *modelShared) Begin() (fallback.SharedTurn, error) {
	t, err := a.m.Begin()
	if err != nil {
		return fallback.SharedTurn{}, err
	}
	return a.shared(t), nil
}

// shared wraps a ticket for package fallback.
func (a *modelShared) shared(t Turn) fallback.SharedTurn {
	if t.local != nil {
		id := a.ids.Add(1)
		a.locals.Store(id, t)
		st := fallback.SharedTurn{Gen: localBit | id, Entry: a.m.entryOf(t.Model()), Issued: time.Now()}
		if t.IsProbe() {
			st.Probe = 1
			st.Deadline, _ = t.Deadline()
		}
		return st
	}
	st := fallback.SharedTurn{Gen: t.gen, Epoch: t.ce, Probe: t.probe, Entry: t.entry,
		Issued: a.m.s.clock.toLocal(t.issued), Uncounted: t.unc}
	if t.probe != 0 {
		st.Deadline = time.Unix(0, t.dl)
	}
	return st
}

func (a *modelShared) Settle(st fallback.SharedTurn, o fallback.Outcome, f fallback.Failure) {
	var t Turn
	if st.Gen&localBit != 0 {
		v, ok := a.locals.LoadAndDelete(st.Gen &^ localBit)
		if !ok {
			return
		}
		t = v.(Turn)
	} else {
		t = Turn{m: a.m, gen: st.Gen, ce: st.Epoch, probe: st.Probe, entry: st.Entry, issued: a.m.s.clock.toStore(st.Issued)}
	}
	switch o {
	case fallback.OutcomeSuccess:
		t.Success()
	case fallback.OutcomeFailure:
		t.Fail(f)
	case fallback.OutcomeTrip:
		t.settle("trip", f) // the Manager's per-process window tripped: the fleet opens as one
	default:
		t.Cancel()
	}
}

// slowArg lists the models slow reports as the script reads them.
func (a *modelShared) slowArg(slow func(int) bool) string {
	var b []byte
	for i := 0; i <= a.m.n; i++ {
		if slow(i) {
			b = strconv.AppendInt(append(b, ' '), int64(i), 10)
		}
	}
	return string(b)
}

func (a *modelShared) Next(probed bool, slow func(int) bool) (fallback.SharedTurn, error) {
	t, err := a.m.begin(extra{probed: probed, slow: a.slowArg(slow)})
	if err != nil {
		return fallback.SharedTurn{}, err
	}
	return a.shared(t), nil
}

func (a *modelShared) Hedge(slow func(int) bool, skip int) (fallback.SharedTurn, bool) {
	t, ok := a.m.hedge(extra{slow: a.slowArg(slow), skip: skip})
	if !ok {
		return fallback.SharedTurn{}, false
	}
	return a.shared(t), true
}

func (a *modelShared) Usable(probed bool, slow func(int) bool) bool { return a.m.usable(probed, slow) }

func (a *modelShared) ActiveModel() string         { return a.m.ActiveModel() }
func (a *modelShared) State() fallback.State       { return a.m.State() }
func (a *modelShared) FallbackActivated() bool     { return a.m.FallbackActivated() }
func (a *modelShared) Snapshot() fallback.Snapshot { return a.m.Snapshot().Snapshot }
func (a *modelShared) SetAvailable(model string, available bool) error {
	return a.m.SetAvailable(model, available)
}
func (a *modelShared) Reset()                                { a.m.Reset() }
func (a *modelShared) Hold(until time.Time, reason string)   { a.m.Hold(until, reason) }
func (a *modelShared) Release()                              { a.m.Release() }
func (a *modelShared) Reconfigure(s fallback.Settings) error { return a.m.Reconfigure(s) }
func (a *modelShared) Disable(model string, until time.Time, reason string) error {
	return a.m.Disable(model, until, reason)
}

// entryOf returns the chain index of model, -1 for the primary (or "").
func (m *ModelBreaker) entryOf(model string) int {
	for i, c := range m.set.Chain {
		if c == model {
			return i
		}
	}
	return -1
}
