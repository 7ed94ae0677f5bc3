package fleet

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/notify"
)

// modelMirror is one immutable view of a shared model breaker. Store times
// are µs since the Unix epoch.
type modelMirror struct {
	modal[*fallback.Manager]

	ep, v, g, ce, pq uint64
	st               fallback.State
	f, s             int
	ta, pst          int64 // trip time (-1 none), probe start
	cen, sh, lf      int64 // cooldown end (0 none), the streak's latest hint and failure time
	cause            fallback.Cause
	act, pr          bool
	att              []int
	dis              []bool
	du               []int64    // each manual disable's end (0: until enabled)
	dexp             int64      // the earliest end of a disable in force (0 none)
	route            int        // Fallback: the active entry, -1 (no chain), -2 (exhausted)
	hr               string     // the latest hold's reason (shown while held)
	dr               []string   // each entry's latest disable's reason (shown while disabled)
	rat              []reasonAt // the state version each reason was written at (the hold's, then the entries')
	trips            int        // SEMANTICS §9.1: the trip count n
	closedAt         int64      // when the state last became Primary (store µs; 0: long ago)
}

// ModelBreaker is a model breaker with a fallback chain (SEMANTICS §3) whose
// state is shared by every process that creates one with the same Store
// prefix and name. Create it with [Store.Model]. It has the methods of
// [fallback.Manager]. A ModelBreaker is safe for concurrent use.
type ModelBreaker struct {
	s        *Store
	name     string
	set      fallback.Settings // Primary and Chain are read from it; the numbers from tune
	tune     atomic.Pointer[modelTune]
	keys     []string
	ch       string
	n        int
	onChange func(fallback.Transition)
	events   notify.Queue[fallback.Transition]
	attached int // Managers attached through ModelBackend (s.mu); -1: made by Store.Model

	mirror  atomic.Pointer[modelMirror]
	mu      sync.Mutex
	pending *opAct // an operator's act announced for the state message that follows (mu)
}

// Model returns the shared model breaker named name, configured by fs
// exactly as [fallback.New] would be (the same defaults and validation;
// Settings.Now is not used: shared time is the store's). Every process must
// use the same settings (above all the same chain) for the same name. A
// Store holds one model breaker per name. The failure-rate window, slow
// calls and retry budget of SEMANTICS §8 are kept per process by the
// fallback.Manager (docs/FLEET.md): to have them, build the Manager with
// fallback.New and [Store.ModelBackend]; a ModelBreaker used directly applies
// them only while the store is down (its local manager).
func (s *Store) Model(name string, fs fallback.Settings) (*ModelBreaker, error) {
	return s.model(name, fs, -1)
}

// model is Model, with the breaker's count of attached Managers (-1: made
// by Store.Model, never forgotten) set before it is registered.
func (s *Store) model(name string, fs fallback.Settings, attached int) (*ModelBreaker, error) {
	if _, err := fallback.New(fallback.Settings{Primary: fs.Primary, Chain: fs.Chain,
		TripThreshold: fs.TripThreshold, RecoveryTimeout: fs.RecoveryTimeout,
		RecoverySuccessesNeeded: fs.RecoverySuccessesNeeded, MaxFailCount: fs.MaxFailCount,
		ProbeTimeout: fs.ProbeTimeout, QuotaCooldown: fs.QuotaCooldown, HedgeAfter: fs.HedgeAfter,
		HedgeBudget: fs.HedgeBudget, RecoveryBackoff: fs.RecoveryBackoff,
		MaxRecoveryTimeout: fs.MaxRecoveryTimeout}); err != nil {
		return nil, err // the same validation as fallback.New
	}
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	ord := func(v, def time.Duration) time.Duration {
		if v == 0 {
			return def
		}
		return v
	}
	fs.Chain = append([]string(nil), fs.Chain...)
	fs.TripThreshold = or(fs.TripThreshold, fallback.DefaultTripThreshold)
	fs.RecoverySuccessesNeeded = or(fs.RecoverySuccessesNeeded, fallback.DefaultRecoverySuccessesNeeded)
	fs.MaxFailCount = or(fs.MaxFailCount, fallback.DefaultMaxFailCount)
	fs.RecoveryTimeout = ord(fs.RecoveryTimeout, fallback.DefaultRecoveryTimeout)
	fs.ProbeTimeout = ord(fs.ProbeTimeout, fallback.DefaultProbeTimeout)
	fs.QuotaCooldown = ord(fs.QuotaCooldown, fallback.DefaultQuotaCooldown)
	fs = maxRecovery(fs)
	key := s.key("model", name)
	m := &ModelBreaker{
		s: s, name: name, set: fs, keys: []string{key}, ch: key + ":ch",
		n: len(fs.Chain), onChange: fs.OnTransition, attached: attached,
	}
	m.tune.Store(m.newTune(fs))
	m.mirror.Store(&modelMirror{modal: modal[*fallback.Manager]{mode: Shared}, ta: -1, att: make([]int, m.n), dis: make([]bool, m.n),
		du: make([]int64, m.n), dr: make([]string, m.n), route: m.routeOf(nil, make([]int, m.n), make([]bool, m.n))})
	if err := s.register(m); err != nil {
		return nil, err
	}
	return m, nil
}

// width is the number of integers of the script's state.
func (m *ModelBreaker) width() int { return 18 + 2*m.n }

// Name returns the breaker's name (its key in the store).
func (m *ModelBreaker) Name() string { return m.name }

func (m *ModelBreaker) channel() string { return m.ch }

// routeOf returns the active chain entry, -1 with no chain, -2 when spent.
func (m *ModelBreaker) routeOf(_ *modelMirror, att []int, dis []bool) int {
	if m.n == 0 {
		return -1
	}
	for i := range m.n {
		if !dis[i] && att[i] < m.tuned().set.MaxFailCount {
			return i
		}
	}
	return -2
}
