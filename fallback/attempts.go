package fallback

import (
	"sync"
	"sync/atomic"
	"time"
)

// Failure is a failed turn's report, for [Ticket.Fail].
type Failure struct {
	// Kind is the kind of the failure: Transient, RateLimit (a throttle or an
	// overload) or Quota. Any other value counts as Transient.
	Kind Kind
	// Hint is the provider's "call again at" (SEMANTICS §4); zero: none. The
	// latest hint of the failures that trip the primary holds it open until
	// then ("open until the hint").
	Hint time.Time
	// Timeout reports that the turn gave no answer before its deadline. A
	// timeout of a ticket that is not the probe is dated at its call's start,
	// now − Elapsed, for the trip time and every cooldown (§8.4); a
	// probe's is dated when it is reported (a probe cut at its lease: the
	// lease end).
	Timeout bool
	// Elapsed is how long the timed-out call ran, from its start to the
	// report (SEMANTICS §8.4): the caller measures it, so that Begin
	// reads no clock. Zero (or negative): the timeout is dated when it is
	// reported, except through a Backend, which dates it at the ticket's
	// issue. Ignored unless Timeout is set, and for the probe.
	Elapsed time.Duration
}

// slow reports whether f is a slow failure (SEMANTICS §7): a timeout, or a
// rate limit of any kind.
func (f Failure) slow() bool { return f.Timeout || f.Kind == RateLimit || f.Kind == Quota }

// Attempts is the memory of one turn (one agent turn, one gateway request)
// across its attempts: whether it has held the probe ticket, and which models
// failed it slowly (SEMANTICS §3 "one probe per turn", §7). Pass the same
// *Attempts to every [Manager.Next] and [Manager.Hedge] of the turn, and to no
// other turn or Manager. The zero value is a new turn. It is safe for
// concurrent use (two attempts of one hedged turn) and does not allocate for a
// manager of up to 64 models (the primary and 63 chain entries); beyond that a
// bounded bitset (one bit per model) is allocated once.
type Attempts struct {
	slow0  atomic.Uint64                   // bit 0: the primary; bit i+1: chain entry i
	more   atomic.Pointer[[]atomic.Uint64] // models 64 and up
	probed atomic.Bool                     // the turn has held a probe ticket
	begun  atomic.Bool                     // the turn's first Next has run
	fed    atomic.Uint64                   // bit i: the turn has fed model i's retry budget (i < 64)

	mu       sync.Mutex
	probeErr bool    // the turn's probe failed
	probeF   Failure // its report
}

// slow reports whether model i (0: the primary, i+1: chain entry i) failed
// the turn slowly. A nil *Attempts has no memory.
func (a *Attempts) slow(i int) bool {
	if a == nil {
		return false
	}
	if i < 64 {
		return a.slow0.Load()&(1<<uint(i)) != 0
	}
	p := a.more.Load()
	if p == nil || (i-64)/64 >= len(*p) {
		return false
	}
	return (*p)[(i-64)/64].Load()&(1<<uint((i-64)%64)) != 0
}

// clean reports whether the turn has no memory yet that changes its routing.
func (a *Attempts) clean() bool {
	return a == nil || (a.slow0.Load() == 0 && a.more.Load() == nil && !a.probed.Load())
}

// markSlow records that model i of a manager of n models failed slowly.
func (a *Attempts) markSlow(i, n int) {
	if i < 64 {
		a.slow0.Or(1 << uint(i))
		return
	}
	p := a.more.Load()
	if p == nil {
		words := make([]atomic.Uint64, (n-64+63)/64)
		if !a.more.CompareAndSwap(nil, &words) {
			p = a.more.Load()
		} else {
			p = &words
		}
	}
	(*p)[(i-64)/64].Or(1 << uint((i-64)%64))
}

// record notes the failure f of ticket t, begun for this turn.
func (a *Attempts) record(t *Ticket, f Failure) {
	if f.slow() {
		a.markSlow(t.entry()+1, len(t.m.cfg.models)+1)
	}
	if t.probe() != 0 {
		a.mu.Lock()
		a.probeErr, a.probeF = true, f
		a.mu.Unlock()
	}
}

// probeFailure returns the report of the turn's failed probe, if any.
func (a *Attempts) probeFailure() (Failure, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.probeF, a.probeErr
}

// Usable reports whether another model is usable for the turn's next
// attempt (SEMANTICS §7): whether [Manager.Next] would now route the turn to
// a model that has not failed it slowly (the caller adds its own attempt
// budget). It is a pure read: it changes nothing. A nil *Attempts is a new
// turn.
func (a *Attempts) Usable(m *Manager) bool {
	if m.shared != nil {
		return m.shared.Usable(a != nil && a.probed.Load(), a.slow)
	}
	r := m.peek(a)
	return !r.exhausted && !a.slow(r.entry+1)
}

// NextModel returns the model [Manager.Next] would now route the turn a
// to, and true, when that is a model the turn has not failed slowly nor
// routed past (when [Attempts.Usable] is true); "" and false otherwise. It
// is a pure read: it changes nothing. The gateway asks it before each
// attempt, to route past a pool that admits no member with
// [Attempts.RoutePast] rather than draw a ticket for it. A nil *Attempts
// is a new turn.
func (a *Attempts) NextModel(m *Manager) (string, bool) {
	if m.shared != nil {
		return a.sharedNextModel(m)
	}
	r := m.peek(a)
	switch {
	case r.exhausted || a.slow(r.entry+1):
		return "", false
	case r.entry < 0:
		return m.cfg.primary, true
	}
	return m.cfg.models[r.entry], true
}

// sharedNextModel is NextModel through a Backend, whose Shared answers
// only Usable: the model Next routes to is the first, in routing order
// (the primary, then the chain), that the turn has not passed and that
// Next would route to were every other model passed. Routing past a model
// other than the one Next picks never changes its pick, so that first one
// is the pick (SEMANTICS §7).
func (a *Attempts) sharedNextModel(m *Manager) (string, bool) {
	probed := a != nil && a.probed.Load()
	if !m.shared.Usable(probed, a.slow) {
		return "", false
	}
	for i := range len(m.cfg.models) + 1 {
		if a.slow(i) {
			continue
		}
		if m.shared.Usable(probed, func(j int) bool { return j != i }) {
			if i == 0 {
				return m.cfg.primary, true
			}
			return m.cfg.models[i-1], true
		}
	}
	return "", false
}

// RoutePast routes the rest of the turn a past model (the primary or a
// chain entry) as a slow failure of it would (SEMANTICS §7, §9.3 rule 6):
// Next, Usable and Hedge pass it as they pass a model that failed the turn
// slowly. It is pure memory of the turn: it draws no ticket, takes no probe
// slot, records no verdict and fires no transition, so the breaker and its
// observers see nothing. The gateway calls it, before the turn's next Next,
// for a pool entry that admits no member now, which a drawn ticket could
// only skip. A model that is neither the primary nor a chain entry is an
// error matching [ErrNotInChain], and a nil *Attempts (a turn without
// memory) ignores it.
func (a *Attempts) RoutePast(m *Manager, model string) error {
	i := 0
	if model != m.cfg.primary {
		if i = m.index(model) + 1; i == 0 {
			return m.notInChain(model)
		}
	}
	if a != nil {
		a.markSlow(i, len(m.cfg.models)+1)
	}
	return nil
}

// Next begins an attempt of the turn a: [Manager.Begin] with the turn's
// memory (SEMANTICS §3, §7). A turn that has held a probe ticket never gets
// the probe slot again: it goes to the active chain entry, and when the
// chain is spent or empty Next returns an [*ExhaustedError] with Probed set,
// the probe's report and the time until the next probe may be granted. The
// turn routes past the models that failed it slowly (a timeout or a rate
// limit of any kind), in chain order: in Primary, a turn whose primary failed
// slowly goes to the first usable chain entry, and that ticket's verdict
// counts nothing for the entry (as on Turn.Success). When no model is left
// past them, the turn goes where Begin would send it. The turn's first Next
// feeds the hedge budget. Tickets begun by Next record their failures in a.
// Next(nil) is Begin. With a clean turn Next costs what Begin does.
func (m *Manager) Next(a *Attempts) (Ticket, error) {
	if a == nil {
		return m.Begin()
	}
	if !a.begun.Load() && a.begun.CompareAndSwap(false, true) && m.tuning.hedgeAfter.Load() > 0 {
		m.hedges.Feed()
	}
	return m.begin(a)
}

// hedgeCap is the size of the hedge bucket (SEMANTICS §7.4): it starts
// full and is capped there.
const hedgeCap = 10

// Hedge returns the hedge ticket of SEMANTICS §7.4 for the turn a, whose
// attempt running has waited HedgeAfter without its first content: a ticket
// for the first chain entry that is usable (not failed), has not failed the
// turn slowly and is not running's model (never the primary, never the
// probe), spending 1 of the hedge budget. It returns false, spending nothing,
// when HedgeAfter is 0, the bucket holds less than 1, or no such entry exists.
// The hedge is settled like any ticket: the caller serves the first of the
// two attempts to produce content and settles the other with Cancel, or, if
// it had waited at least HedgeAfter, with a Transient failure. A hedge served
// while the breaker is in Primary counts nothing for its entry.
func (m *Manager) Hedge(a *Attempts, running Ticket) (Ticket, bool) {
	if m.tuning.hedgeAfter.Load() == 0 {
		return Ticket{}, false
	}
	skip := -1
	if running.m == m {
		skip = running.entry()
	}
	if m.shared != nil {
		return m.sharedHedge(a, skip)
	}
	rec := recorder{q: m.queue}
	clk := m.clock()
	m.mu.Lock()
	m.mc.expireLease(&clk, &rec)
	m.mc.expireDisables(&clk, &rec)
	i := m.mc.usableEntry(a, skip)
	ok := i >= 0 && m.hedges.Spend()
	var t Ticket
	if ok {
		t = m.issue(&clk, route{entry: i, uncounted: m.mc.state == Primary}, a)
	}
	m.publish()
	m.mu.Unlock()
	m.drain(&rec)
	return t, ok
}
