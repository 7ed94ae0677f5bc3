package fallback

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// Manual control (SEMANTICS §8.5, GATEWAY §9.2): an operator's hold of the
// primary, a chain entry's manual disable with an end, and the live change
// of a running manager's settings (GATEWAY §9.3).

// Hold takes the primary out of rotation until until (SEMANTICS §8.5): from
// any state the manager goes to Fallback, with the events and side effects
// of a trip (from Primary or Recovering a Transition to Fallback fires, the
// streak is cleared and a probe in flight is forgotten; from Fallback the
// state stays), its cooldown ends at the later of until and the cooldown
// already running, with cause [CauseManual], and no probe turn is issued
// before then. After it the manager recovers as after any cooldown: the next
// turn is a probe. A held manager with no chain refuses turns with an
// [*ExhaustedError] (Held set) until the hold ends. A second Hold extends
// the hold and never shortens it; its reason replaces the first's. An until
// that has passed is a trip whose cooldown has ended: the next turn probes.
// [Snapshot.HoldUntil] and [Snapshot.HoldReason] show the hold in force;
// [Manager.Release] and [Manager.Reset] end it. With a [Backend] the hold's
// end is computed on the backend's clock (the time left until until) and
// shared.
func (m *Manager) Hold(until time.Time, reason string) {
	if m.shared != nil {
		m.shared.Hold(until, reason)
		return
	}
	m.locked(func(clk *clock, rec *recorder) { m.mc.hold(until, reason, clk, rec) })
}

// Release ends the hold in force at once (SEMANTICS §8.5): the cooldown
// ends now, so the next turn may probe the primary. Without a hold in force
// it changes nothing (a cooldown of a trip runs on).
func (m *Manager) Release() {
	if m.shared != nil {
		m.shared.Release()
		return
	}
	m.locked(func(clk *clock, rec *recorder) { m.mc.release(clk) })
}

// Disable takes a chain entry out of routing by hand, as SetAvailable(entry,
// false) does, until until (zero: until [Manager.Enable] or
// SetAvailable(entry, true)), with a reason that [Snapshot] shows
// ([Entry.DisabledUntil], [Entry.DisabledReason]). The disable ends by
// itself at until, lazily (no goroutine): the first call after it sees the
// entry enabled. An until that has passed enables the entry. A second
// Disable replaces the first's end and reason. If the active entry changes
// while in Fallback, a Fallback -> Fallback transition fires (also when a
// disable ends). The primary, or a model not in the chain, is an error
// matching [ErrNotInChain].
func (m *Manager) Disable(entry string, until time.Time, reason string) error {
	i := m.index(entry)
	if i < 0 {
		return m.notInChain(entry)
	}
	if m.shared != nil {
		return m.shared.Disable(entry, until, reason)
	}
	m.locked(func(clk *clock, rec *recorder) { m.mc.disable(i, true, until, reason, clk, rec) })
	return nil
}

// Enable puts a chain entry disabled by hand back into routing: it is
// SetAvailable(entry, true).
func (m *Manager) Enable(entry string) error { return m.SetAvailable(entry, true) }

// locked runs f on the machine under the lock, publishes and delivers the
// transitions it recorded.
func (m *Manager) locked(f func(clk *clock, rec *recorder)) {
	rec := recorder{q: m.queue}
	clk := m.clock()
	m.mu.Lock()
	f(&clk, &rec)
	m.publish()
	m.mu.Unlock()
	m.drain(&rec)
}

// held reports whether an operator's hold is in force: Fallback with cause
// manual. Begin's cooldown step moves a hold that has ended to Recovering;
// a pure read checks the cooldown's end itself.
func (c *machine) held() bool { return c.state == Fallback && c.cause == CauseManual }

// hold applies Manager.Hold.
func (c *machine) hold(until time.Time, reason string, clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	c.expireDisables(clk, rec)
	now := clk.now()
	if c.state != Fallback {
		from := c.state
		c.trip(now, Failure{}, false, nil) // the side effects of a trip, n kept (§9.1); its event is below
		c.cooldownEnd, c.cause, c.holdReason = until, CauseManual, reason
		rec.emit(Transition{From: from, To: Fallback, FromModel: c.cfg.primary, ToModel: c.fallbackModel(), At: now})
		return
	}
	before := c.fallbackModel()
	if until.After(c.cooldownEnd) {
		c.cooldownEnd = until
	}
	c.cause, c.holdReason = CauseManual, reason
	if after := c.fallbackModel(); after != before { // no chain: the primary is held out now
		rec.emit(Transition{From: Fallback, To: Fallback, FromModel: before, ToModel: after, At: now})
	}
}

// release applies Manager.Release: a hold in force ends now.
func (c *machine) release(clk *clock) {
	if c.held() && clk.since(c.cooldownEnd) < 0 {
		c.cooldownEnd = clk.now()
	}
}

// disable disables (off) or enables chain entry i; a disable ends at until
// (zero: never) and carries reason.
func (c *machine) disable(i int, off bool, until time.Time, reason string, clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	c.expireDisables(clk, rec)
	if off && !until.IsZero() && clk.since(until) >= 0 {
		off = false // ended already
	}
	before := c.active()
	e := &c.chain[i]
	e.disabled, e.until, e.reason = off, until, reason
	if !off {
		e.until, e.reason = time.Time{}, ""
	}
	c.disEnd = earliestEnd(c.chain)
	c.advanced(before, clk, rec)
}

// earliestEnd returns the earliest end of the manual disables with an end;
// zero if none.
func earliestEnd(chain []entry) time.Time {
	var end time.Time
	for _, e := range chain {
		if e.disabled && !e.until.IsZero() && (end.IsZero() || e.until.Before(end)) {
			end = e.until
		}
	}
	return end
}

// expireDisables applies the lazy end of manual disables: an entry whose
// disable has ended is enabled (a Fallback -> Fallback transition fires if
// the active entry changes). It writes to chain: only the real machine
// calls it; a pure read uses viewChain.
func (c *machine) expireDisables(clk *clock, rec *recorder) {
	if c.disEnd.IsZero() || clk.since(c.disEnd) < 0 {
		return
	}
	before := c.active()
	expire(c.chain, clk)
	c.disEnd = earliestEnd(c.chain)
	c.advanced(before, clk, rec)
}

// expire enables the entries of chain whose disable has ended.
func expire(chain []entry, clk *clock) {
	for i := range chain {
		if e := &chain[i]; e.disabled && !e.until.IsZero() && clk.since(e.until) >= 0 {
			e.disabled, e.until, e.reason = false, time.Time{}, ""
		}
	}
}

// viewChain returns the chain as a pure read sees it now: chain itself, or a
// copy with the disables that have ended expired.
func (c *machine) viewChain(clk *clock) []entry {
	if c.disEnd.IsZero() || clk.since(c.disEnd) < 0 {
		return c.chain
	}
	chain := slices.Clone(c.chain)
	expire(chain, clk)
	return chain
}

// routeEnds is how long Fallback's published route holds: until the
// cooldown's end, or the earliest end of a manual disable if earlier.
func (c *machine) routeEnds() time.Time {
	if !c.disEnd.IsZero() && c.disEnd.Before(c.cooldownEnd) {
		return c.disEnd
	}
	return c.cooldownEnd
}

// tuning holds the settings that the lock-free paths read, so that
// Reconfigure can change them while turns run.
type tuning struct {
	probeTimeout   atomic.Int64                    // ns
	hedgeAfter     atomic.Int64                    // ns
	slowAfter      atomic.Int64                    // ns: §8.2, read by SuccessAfter
	probeSlowAfter atomic.Int64                    // ns: §9.2, read by SuccessAfter for a probe
	rule           atomic.Pointer[ratewindow.Rule] // §8.1, §8.2: read by the shared settlement
}

// store copies the lock-free settings of c.
func (t *tuning) store(c *config) {
	t.probeTimeout.Store(int64(c.probeTimeout))
	t.hedgeAfter.Store(int64(c.hedgeAfter))
	t.slowAfter.Store(int64(c.slowAfter))
	t.probeSlowAfter.Store(int64(c.probeSlowAfter))
	rule := c.rule
	t.rule.Store(&rule)
}
