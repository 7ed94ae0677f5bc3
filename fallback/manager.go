package fallback

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/internal/notify"
	"github.com/loopctl/loopctl-go/internal/ratewindow"
	"github.com/loopctl/loopctl-go/internal/retrybudget"
)

// Manager is the model breaker: it routes each turn to the primary model or to
// a backup from the fallback chain, as described in the package documentation.
// Create one with [New]. A Manager is safe for concurrent use.
type Manager struct {
	cfg          config
	now          func() time.Time // Settings.Now; nil: the monotonic clock from epoch
	epoch        time.Time        // the time New ran (on Settings.Now's clock if set)
	onTransition func(Transition)
	queue        *notify.Queue[Transition] // nil when onTransition is nil

	// word publishes, for the lock-free paths of Begin and the settlements,
	// the generation and the state bits (see publish). Written under mu.
	word  atomic.Uint64
	route atomic.Pointer[fallbackRoute] // in Fallback with a route: where Begin goes; else nil
	slots sync.Pool                     // of *slot: settled tickets' slots, reused by Begin
	// hedges is the hedge bucket (§7.4): Next feeds it HedgeBudget (its feed,
	// which Reconfigure retunes), Hedge spends it.
	hedges retrybudget.Bucket
	// changed is mc.changed, published for the lock-free success path, which
	// records a success in the window only for a ticket issued since the
	// latest state change.
	changed atomic.Uint64
	// win is the failure-rate window (§8.1, §8.2); nil when off. mc.win is
	// the same window (Reconfigure replaces both under mu).
	win atomic.Pointer[ratewindow.Window]
	// budgets are the retry budgets (§8.3): 0 the primary, i+1 chain entry i.
	budgets []retrybudget.Bucket

	mu sync.Mutex
	mc machine

	shared Shared // Settings.Backend's state; nil: mc

	tuning tuning // the settings read without the lock (Reconfigure changes them)
}

// Bits of Manager.word below the generation.
const (
	wPrimary    = 1 << 0 // state is Primary: Begin routes to the primary without the lock
	wRecovering = 1 << 1 // state is Recovering: every settlement takes the lock
	wFailures   = 1 << 2 // Primary with consecutive failures: a success may change them
	wGenShift   = 3
)

// publish stores the state for the lock-free paths; m.mu is held.
func (m *Manager) publish() {
	w := m.mc.gen << wGenShift
	switch m.mc.state {
	case Primary:
		w |= wPrimary
		if m.mc.failures != 0 {
			w |= wFailures
		}
	case Recovering:
		w |= wRecovering
	}
	var r *fallbackRoute
	if m.mc.state == Fallback {
		entry := -1
		if len(m.mc.chain) > 0 {
			entry = m.mc.active()
		}
		if entry >= 0 || (len(m.mc.chain) == 0 && !m.mc.held()) { // not exhausted, not held with no chain
			r = &fallbackRoute{gen: m.mc.gen, epoch: m.mc.epoch, entry: entry, ends: m.mc.routeEnds()}
			if old := m.route.Load(); old != nil && *old == *r {
				r = old // unchanged: keep it (publish runs on every locked call)
			}
		}
	}
	if r != m.route.Load() {
		m.route.Store(r)
	}
	m.changed.Store(m.mc.changed)
	m.word.Store(w)
}

// fallbackRoute is how Begin routes in Fallback until the cooldown has passed,
// published for Begin's lock-free path: nil while the state is not Fallback or
// the chain is spent. It is immutable; a change publishes a new one.
type fallbackRoute struct {
	gen, epoch uint64
	entry      int       // chain entry; -1 (the primary) when the chain is empty
	ends       time.Time // the cooldown's end, or a manual disable's end if earlier
}

// New returns a Manager in state Primary. It returns an error (matching
// [ErrInvalidSettings], one [*SettingsError] per problem, joined) if the primary
// is empty or blank, a chain entry is blank, duplicates an earlier entry or is
// the primary, or a number is negative.
func New(s Settings) (*Manager, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: newConfig(s), now: s.Now, onTransition: s.OnTransition}
	if m.now == nil {
		m.epoch = time.Now()
	} else {
		m.epoch = m.now()
	}
	if m.onTransition != nil {
		m.queue = new(notify.Queue[Transition])
	}
	m.hedges.Init(m.cfg.hedgeBudget, hedgeCap) // hedgeBudget > 0: newConfig applied the default
	m.tuning.store(&m.cfg)
	m.budgets = make([]retrybudget.Bucket, len(m.cfg.models)+1)
	for i := range m.budgets {
		m.budgets[i].Init(m.cfg.retryFeed, m.cfg.retryBurst)
	}
	if m.cfg.windowed() {
		m.win.Store(ratewindow.New(m.cfg.rateWindow))
	}
	m.mc = machine{cfg: &m.cfg, chain: make([]entry, len(m.cfg.models)), win: m.win.Load(), closedAt: m.epoch}
	m.publish()
	if s.Backend != nil {
		sh, err := s.Backend.Attach(m.attachSettings(s))
		if err != nil {
			return nil, err
		}
		m.shared = sh
		m.word.Store(wRecovering) // no lock-free path applies: every call takes a slow path
	}
	return m, nil
}

// clock returns a clock for one call.
func (m *Manager) clock() clock { return clock{f: m.now, epoch: &m.epoch} }

// Begin starts a turn. Atomically, it applies the lazy probe-lease expiry, moves
// Fallback to Recovering once the cooldown has ended, and routes the turn:
//
//   - Primary: to the primary.
//   - Recovering with no probe in flight: to the primary, as the probe
//     ([Ticket.IsProbe] is true).
//   - Recovering with a probe in flight, and Fallback: to the active chain
//     entry; to the primary if the chain is empty; if the chain is spent, Begin
//     returns an [*ExhaustedError] (matching [ErrExhausted]) and a zero Turn.
//
// Begin is a turn without memory; [Manager.Next] is Begin for a turn that
// makes several attempts. The caller sends the turn to [Ticket.Model] and
// settles the ticket once. Begin and the settlements do not allocate, except
// on a transition or a change of the active entry, to return an error, or to
// replace the bookkeeping of tickets that were never settled (or that a
// garbage collection dropped from the cache of settled tickets' bookkeeping, a
// sync.Pool). In Primary, Begin reads no clock, takes no lock and allocates
// nothing (SEMANTICS §8.4), and in Fallback before the cooldown has ended it
// takes no lock (it reads the clock once, for the cooldown); nor do the
// successes and cancels outside Recovering that cannot change anything (with
// a rate window, a success of the primary reads the clock once, to date it in
// the window). Each turn feeds the retry budget of each model it reaches
// (§8.3, [Ticket.Retry]).
func (m *Manager) Begin() (Ticket, error) { return m.begin(nil) }

// begin is Begin for the turn a (nil: no memory).
func (m *Manager) begin(a *Attempts) (Ticket, error) {
	if a.clean() {
		if t, ok := m.fastBegin(a); ok {
			return t, nil
		}
	}
	if m.shared != nil {
		return m.sharedBegin(a)
	}
	rec := recorder{q: m.queue}
	clk := m.clock()
	m.mu.Lock()
	m.mc.expireLease(&clk, &rec) // as every call: the lease, then the disables' ends
	m.mc.expireDisables(&clk, &rec)
	r := m.mc.begin(&clk, &rec, a)
	if r.exhausted {
		err := m.exhausted(&clk, a)
		m.publish()
		m.mu.Unlock()
		m.drain(&rec)
		return Ticket{}, err
	}
	t := m.issue(&clk, r, a)
	m.publish()
	m.mu.Unlock()
	m.drain(&rec)
	return t, nil
}

// fastBegin routes without the lock where no lazy step can apply: Primary,
// and Fallback before the cooldown's end with the chain not spent.
func (m *Manager) fastBegin(a *Attempts) (Ticket, bool) {
	if w := m.word.Load(); w&wPrimary != 0 {
		// Primary: no lazy step applies (they concern Recovering and Fallback)
		// and the turn goes to the primary, in the published generation. No
		// clock read (§8.4): a timeout is dated by its reported duration.
		m.feed(a, -1)
		s := m.takeSlot(a)
		return Ticket{m: m, slot: s, seq: s.seq.Load(), gen: w >> wGenShift, who: serving(-1, 0)}, true
	}
	if r := m.route.Load(); r != nil {
		clk := m.clock()
		if clk.since(r.ends) < 0 {
			m.feed(a, r.entry)
			s := m.takeSlot(a)
			return Ticket{m: m, slot: s, seq: s.seq.Load(), gen: r.gen, epoch: r.epoch, at: int64(clk.sinceEpoch()), who: serving(r.entry, 0)}, true
		}
	}
	return Ticket{}, false
}

// noEpoch is the chain-budget epoch of a ticket whose verdict counts nothing
// for its chain entry (one served while the breaker is in Primary).
const noEpoch = ^uint64(0)

// issue builds the ticket for route r of the turn a; m.mu is held.
func (m *Manager) issue(clk *clock, r route, a *Attempts) Ticket {
	m.feed(a, r.entry)
	s := m.takeSlot(a)
	t := Ticket{m: m, slot: s, seq: s.seq.Load(), gen: m.mc.gen, epoch: m.mc.epoch, at: int64(clk.sinceEpoch()), who: serving(r.entry, r.probe)}
	if r.uncounted {
		t.epoch = noEpoch
	}
	if r.probe != 0 {
		t.at = int64(m.mc.probeStart.Sub(m.epoch))
		if a != nil {
			a.probed.Store(true)
		}
	}
	return t
}

// exhausted builds the refusal for the turn a (nil: none); m.mu is held.
func (m *Manager) exhausted(clk *clock, a *Attempts) error {
	now := clk.now()
	e := &ExhaustedError{Primary: m.cfg.primary, Chain: append([]string(nil), m.cfg.models...), State: m.mc.state, Held: m.mc.held()}
	switch {
	case m.mc.state == Recovering && m.mc.probing:
		e.ProbeAt = m.mc.probeStart.Add(m.cfg.probeTimeout)
	case m.mc.state == Recovering:
		e.ProbeAt = now // the slot is free: another turn may take it now
	default:
		e.ProbeAt = m.mc.cooldownEnd
	}
	e.RetryIn = max(e.ProbeAt.Sub(now), 0)
	if a != nil && a.probed.Load() {
		e.Probed = true
		e.ProbeFailure, _ = a.probeFailure()
	}
	return e
}

// peek is the route the next Begin of the turn a (nil: a new turn) would
// take at this instant, read on a copy of the machine with no recorder, so
// that it changes nothing: Usable and ActiveModel are pure reads.
func (m *Manager) peek(a *Attempts) route {
	clk := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.mc // shallow copy: begin does not write to chain
	c.chain = c.viewChain(&clk)
	return c.begin(&clk, nil, a)
}

// ActiveModel returns the model the next Begin would route to at this instant,
// or "" if it would return ErrExhausted. It is a pure read: it changes nothing.
// Once the cooldown has passed it names the primary, although the state stays
// Fallback until the next Begin.
func (m *Manager) ActiveModel() string {
	if m.shared != nil {
		return m.shared.ActiveModel()
	}
	r := m.peek(nil)
	switch {
	case r.exhausted:
		return ""
	case r.entry < 0:
		return m.cfg.primary
	}
	return m.cfg.models[r.entry]
}

// State returns the current state as if every lazy transition due by now had
// happened (an expired probe lease and the re-trip it may cause); the cooldown
// transition to Recovering happens only in Begin, so a manager whose cooldown has
// passed still reads Fallback. It is a pure read: it changes nothing.
func (m *Manager) State() State {
	if m.shared != nil {
		return m.shared.State()
	}
	return m.pure().state
}

// FallbackActivated reports whether the manager has tripped since New or the
// last Reset (the sticky "ever tripped" flag). It is a pure read.
func (m *Manager) FallbackActivated() bool {
	if m.shared != nil {
		return m.shared.FallbackActivated()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mc.activated
}

// pure returns a copy of the machine with the lazy lease expiry applied. The
// copy shares chain with the real machine: do not write to it.
func (m *Manager) pure() machine {
	clk := m.clock()
	m.mu.Lock()
	c := m.mc
	c.expireLease(&clk, nil)
	c.chain = c.viewChain(&clk)
	m.mu.Unlock()
	return c
}

// SetAvailable enables or disables a chain entry by hand. A disabled entry is
// failed: routing skips it. Manual disables survive recovery and Reset. If the
// active entry changes while in Fallback, a Fallback -> Fallback transition
// fires. The primary, or a model not in the chain, is an error matching
// [ErrNotInChain].
func (m *Manager) SetAvailable(model string, available bool) error {
	i := m.index(model)
	if i < 0 {
		return m.notInChain(model)
	}
	if m.shared != nil {
		return m.shared.SetAvailable(model, available)
	}
	rec := recorder{q: m.queue}
	clk := m.clock()
	m.mu.Lock()
	m.mc.setAvailable(i, available, &clk, &rec)
	m.publish()
	m.mu.Unlock()
	m.drain(&rec)
	return nil
}

func (m *Manager) index(model string) int {
	for i, c := range m.cfg.models {
		if c == model {
			return i
		}
	}
	return -1
}

type notInChainError struct{ msg string }

func (e *notInChainError) Error() string        { return e.msg }
func (e *notInChainError) Is(target error) bool { return target == ErrNotInChain }

func (m *Manager) notInChain(model string) error {
	if model == m.cfg.primary {
		return &notInChainError{"fallback: " + strconv.Quote(model) + " is the primary, not a chain entry"}
	}
	return &notInChainError{"fallback: " + strconv.Quote(model) + " is not in the fallback chain"}
}

// Reset returns the manager to Primary: it clears the counters, the trip time,
// the fallback-activated flag and every entry's attempt count, and keeps manual
// disables. A transition fires if the state changed. Tickets issued before Reset
// are ignored when settled.
func (m *Manager) Reset() {
	if m.shared != nil {
		m.shared.Reset()
		return
	}
	rec := recorder{q: m.queue, manual: manualAct{name: "reset"}}
	clk := m.clock()
	m.mu.Lock()
	m.mc.reset(&clk, &rec)
	m.publish()
	m.mu.Unlock()
	m.drain(&rec)
}

// drain delivers the transitions recorded by the calling method, outside the lock.
func (m *Manager) drain(rec *recorder) {
	if rec.pushed {
		m.queue.Drain(m.onTransition)
	}
}
