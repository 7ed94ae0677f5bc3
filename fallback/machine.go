package fallback

import (
	"math"
	"time"

	"github.com/loopctl/loopctl-go/internal/notify"
)

// entry is the mutable state of one chain entry; its name is config.models[i].
type entry struct {
	attempts int  // failed turns served by this entry since the last recovery or Reset
	disabled bool // manually disabled with SetAvailable
}

// machine is the whole mutable state of a Manager. Its methods implement
// SEMANTICS section 3. The lazy steps (expireLease, cooldown) and begin never
// write to chain, so a pure read can run them on a shallow copy of the machine
// without changing the real one; settle, reset and setAvailable run only on the
// real machine.
type machine struct {
	cfg *config

	state          State
	gen            uint64 // changes on every state change and Reset, and orders tickets (see settle)
	changed        uint64 // gen as of the latest state change or Reset
	proven         uint64 // gen of the latest-issued ticket whose success on the primary was counted
	epoch          uint64 // chain-budget epoch: changes on recovery and Reset
	failures       int    // consecutive failed turns on the primary / transient probe failures
	probeSuccesses int    // consecutive probe successes (Recovering)
	trippedAt      time.Time
	activated      bool // fallback-activated: ever tripped since New or Reset

	probing    bool      // a probe is in flight (Recovering only)
	probeStart time.Time // when the probe in flight was granted
	probeSeq   uint32    // number of the latest probe granted (the one in flight if probing); never 0

	chain []entry
}

// clock reads the time at most once per call, and only if needed. With
// Settings.Now it calls f; without (f nil) it reads the monotonic clock as an
// offset from the manager's epoch, which is cheaper than time.Now, and builds a
// time.Time (epoch plus offset) only when one is needed: since compares
// against the offset directly.
type clock struct {
	f     func() time.Time
	epoch *time.Time
	off   time.Duration // f nil: time since *epoch, once read
	t     time.Time
	hasT  bool
	hasO  bool
}

// now returns the call's instant.
func (c *clock) now() time.Time {
	if !c.hasT {
		if c.f != nil {
			c.t = c.f()
		} else {
			c.t = c.epoch.Add(c.offset())
		}
		c.hasT = true
	}
	return c.t
}

// offset returns the call's instant as time since *epoch (f nil only).
func (c *clock) offset() time.Duration {
	if !c.hasO {
		c.off, c.hasO = time.Since(*c.epoch), true
	}
	return c.off
}

// since returns now().Sub(t), without building now() when it can.
func (c *clock) since(t time.Time) time.Duration {
	if c.f != nil {
		return c.now().Sub(t)
	}
	// t.Sub(epoch) is exact for times built by now (both carry the same
	// monotonic base); the subtraction saturates like time.Time.Sub.
	a, b := c.offset(), t.Sub(*c.epoch)
	if b == math.MaxInt64 || b == math.MinInt64 { // t.Sub saturated: t is centuries away
		return c.now().Sub(t)
	}
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// recorder pushes transitions to the manager's queue while the manager's lock is
// held. A nil recorder, or one with a nil queue, records nothing.
type recorder struct {
	q      *notify.Queue[Transition]
	pushed bool
}

func (r *recorder) emit(t Transition) {
	if r == nil || r.q == nil {
		return
	}
	r.q.Push(t)
	r.pushed = true
}

// active returns the index of the first chain entry that is not failed, or -1.
func (c *machine) active() int {
	for i, e := range c.chain {
		if !e.disabled && e.attempts < c.cfg.maxFail {
			return i
		}
	}
	return -1
}

// fallbackModel is the model Fallback routes to: the active entry, "" when the
// chain is spent, the primary when there is no chain.
func (c *machine) fallbackModel() string {
	if len(c.chain) == 0 {
		return c.cfg.primary
	}
	if i := c.active(); i >= 0 {
		return c.cfg.models[i]
	}
	return ""
}

// stateModel is the model the current state routes to, as named in Transitions.
func (c *machine) stateModel() string {
	if c.state == Fallback {
		return c.fallbackModel()
	}
	return c.cfg.primary
}

// expireLease applies the lazy probe-lease expiry: a probe in flight whose lease
// has ended frees its slot and counts as one Transient probe failure at the
// lease end.
func (c *machine) expireLease(clk *clock, rec *recorder) {
	if c.state != Recovering || !c.probing {
		return
	}
	if clk.since(c.probeStart) < c.cfg.probeTimeout {
		return
	}
	end := c.probeStart.Add(c.cfg.probeTimeout)
	c.probing, c.probeStart = false, time.Time{}
	c.probeFailed(Transient, end, rec)
}

// cooldown applies Fallback -> Recovering once RecoveryTimeout has passed since
// the trip. Only begin calls it.
func (c *machine) cooldown(clk *clock, rec *recorder) {
	if c.state != Fallback {
		return
	}
	if clk.since(c.trippedAt) < c.cfg.recoveryTimeout {
		return
	}
	now := clk.now()
	from := c.fallbackModel()
	c.state = Recovering
	c.changeState()
	c.failures, c.probeSuccesses = 0, 0
	rec.emit(Transition{From: Fallback, To: Recovering, FromModel: from, ToModel: c.cfg.primary, At: now})
}

// changeState starts a new generation for a state change or Reset: tickets
// issued before it never close or re-open anything.
func (c *machine) changeState() {
	c.gen++
	c.changed = c.gen
}

// trip moves Primary or Recovering to Fallback at the given time.
func (c *machine) trip(at time.Time, rec *recorder) {
	from := c.state
	c.state = Fallback
	c.changeState()
	c.failures, c.probeSuccesses = 0, 0
	c.trippedAt = at
	c.activated = true
	c.probing, c.probeStart = false, time.Time{}
	rec.emit(Transition{From: from, To: Fallback, FromModel: c.cfg.primary, ToModel: c.fallbackModel(), At: at})
}

// recover moves Recovering to Primary.
func (c *machine) recover(at time.Time, rec *recorder) {
	c.state = Primary
	c.changeState()
	c.epoch++
	c.failures, c.probeSuccesses = 0, 0
	c.trippedAt = time.Time{}
	c.probing, c.probeStart = false, time.Time{}
	for i := range c.chain {
		c.chain[i].attempts = 0
	}
	rec.emit(Transition{From: Recovering, To: Primary, FromModel: c.cfg.primary, ToModel: c.cfg.primary, At: at})
}

// probeFailed applies a probe failure (the slot is already free).
func (c *machine) probeFailed(k Kind, at time.Time, rec *recorder) {
	c.probeSuccesses = 0
	if k == RateLimit {
		c.trip(at, rec)
		return
	}
	c.failures++
	if c.failures >= c.cfg.tripThreshold {
		c.trip(at, rec)
	}
}

// probeSucceeded applies a probe success (the slot is already free).
func (c *machine) probeSucceeded(at time.Time, rec *recorder) {
	c.failures = 0
	c.probeSuccesses++
	if c.probeSuccesses >= c.cfg.successesNeeded {
		c.recover(at, rec)
	}
}

// route is where begin sent a turn.
type route struct {
	entry     int    // chain index, or -1 for the primary
	probe     uint32 // probe number, 0 if not a probe
	exhausted bool   // ErrExhausted: no model
}

// begin is the gate: lazy lease expiry, cooldown, then routing. It never writes
// to chain.
func (c *machine) begin(clk *clock, rec *recorder) route {
	c.expireLease(clk, rec)
	c.cooldown(clk, rec)
	switch c.state {
	case Primary:
		return route{entry: -1}
	case Recovering:
		if !c.probing {
			if c.probeSeq++; c.probeSeq == 0 { // 0 means "not a probe"
				c.probeSeq = 1
			}
			c.probing, c.probeStart = true, clk.now()
			return route{entry: -1, probe: c.probeSeq}
		}
	}
	if len(c.chain) == 0 {
		return route{entry: -1}
	}
	if i := c.active(); i >= 0 {
		return route{entry: i}
	}
	return route{entry: -1, exhausted: true}
}

// verdict is how a ticket is settled.
type verdict int

const (
	success verdict = iota
	failure
	cancel
)

// settle applies the verdict of ticket t (already known to be its first
// settlement) to the model that served it.
func (c *machine) settle(t *Turn, v verdict, k Kind, clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	if t.probe() != 0 {
		if c.state != Recovering || !c.probing || c.probeSeq != t.probe() || c.gen != t.gen {
			return // a stale probe: its lease expired, or the state moved on
		}
		c.probing, c.probeStart = false, time.Time{}
		switch v {
		case success:
			c.proven = max(c.proven, t.gen) // a probe success is counted
			c.probeSucceeded(clk.now(), rec)
		case failure:
			c.probeFailed(k, clk.now(), rec)
		}
		return // cancel: the slot is free, nothing else changes
	}
	if v == cancel {
		return
	}
	if t.entry() < 0 {
		// Served by the primary outside a probe: counts only in Primary, and only
		// for a ticket issued since the latest state change.
		if c.state != Primary || t.gen < c.changed {
			return
		}
		// Stale failures (rev 2): tickets are ordered by gen, which also moves
		// on the first failure after a clean streak and on every counted success
		// (one that resets a nonzero streak), so that a failure of a ticket
		// issued before a counted success's ticket is known to be older.
		if v == success {
			if c.failures > 0 {
				c.proven = max(c.proven, t.gen)
				c.failures = 0
				c.gen++
			}
			return
		}
		if t.gen < c.proven {
			return // stale: a newer turn on the primary succeeded
		}
		if c.failures == 0 {
			c.gen++
		}
		c.failures++
		if c.failures >= c.cfg.tripThreshold {
			c.trip(clk.now(), rec)
		}
		return
	}
	// Served by chain entry t.entry(): a failure spends its budget while live.
	if v == success || c.epoch != t.epoch {
		return
	}
	before := c.active()
	c.chain[t.entry()].attempts++
	c.advanced(before, clk, rec)
}

// advanced fires Fallback -> Fallback if the active entry changed from before.
func (c *machine) advanced(before int, clk *clock, rec *recorder) {
	if c.state != Fallback {
		return
	}
	after := c.active()
	if after == before {
		return
	}
	from, to := "", ""
	if before >= 0 {
		from = c.cfg.models[before]
	}
	if after >= 0 {
		to = c.cfg.models[after]
	}
	rec.emit(Transition{From: Fallback, To: Fallback, FromModel: from, ToModel: to, At: clk.now()})
}

// setAvailable enables or disables chain entry i.
func (c *machine) setAvailable(i int, available bool, clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	before := c.active()
	c.chain[i].disabled = !available
	c.advanced(before, clk, rec)
}

// reset returns to Primary, keeping manual disables.
func (c *machine) reset(clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	from, fromModel := c.state, c.stateModel()
	c.state = Primary
	c.changeState()
	c.epoch++
	c.failures, c.probeSuccesses = 0, 0
	c.trippedAt = time.Time{}
	c.activated = false
	c.probing, c.probeStart = false, time.Time{}
	for i := range c.chain {
		c.chain[i].attempts = 0
	}
	if from != Primary {
		rec.emit(Transition{From: from, To: Primary, FromModel: fromModel, ToModel: c.cfg.primary, At: clk.now()})
	}
}
