package fallback

import (
	"time"

	"github.com/loopctl/loopctl-go/internal/notify"
	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// entry is the mutable state of one chain entry; its name is config.models[i].
type entry struct {
	attempts int       // failed turns served by this entry since the last recovery or Reset
	disabled bool      // manually disabled (SetAvailable, Disable)
	until    time.Time // a manual disable's end (zero: until enabled); see expireDisables
	reason   string    // a manual disable's reason
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
	cooldownEnd    time.Time // Fallback, Recovering: when the cooldown ends
	cause          Cause     // why the cooldown ends then
	streakHint     time.Time // the latest hint among the failures of the current streak
	lastFail       time.Time // the latest failure time of the current streak (never moves back)
	activated      bool      // fallback-activated: ever tripped since New or Reset
	holdReason     string    // the reason of the hold in force (see held)
	disEnd         time.Time // the earliest end of a manual disable with an end; zero: none
	trips          int       // n of §9.1: openings in a row (see opening)
	closedAt       time.Time // when the state last became Primary (New, recovery, Reset)

	probing    bool      // a probe is in flight (Recovering only)
	probeStart time.Time // when the probe in flight was granted
	probeSeq   uint32    // number of the latest probe granted (the one in flight if probing); never 0

	chain []entry

	win *ratewindow.Window // the failure-rate window (§8.1, §8.2); nil: off. Shared by copies: only the real machine writes it
}

// recorder pushes transitions to the manager's queue while the manager's lock is
// held. A nil recorder, or one with a nil queue, records nothing.
type recorder struct {
	q      *notify.Queue[Transition]
	pushed bool
	// manual is the operator's act under way (Transition.Manual, Reason,
	// Until): every transition it records carries it.
	manual manualAct
}

// manualAct is the operator's act a recorder stamps on its transitions.
type manualAct struct {
	name, reason string
	until        time.Time
}

func (r *recorder) emit(t Transition) {
	if r == nil || r.q == nil {
		return
	}
	if t.Manual == "" && r.manual.name != "" {
		t.Manual, t.Reason, t.Until = r.manual.name, r.manual.reason, r.manual.until
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
		if c.held() {
			return "" // a held manager with no chain routes nowhere (§8.5)
		}
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
	if rec != nil && rec.manual.name != "" {
		outer := rec.manual // a lease that ended re-trips on its own, whoever calls
		rec.manual = manualAct{}
		defer func() { rec.manual = outer }()
	}
	c.probeFailed(Failure{}, end, rec)
}

// clearStreak zeroes the consecutive failures and what they carried.
func (c *machine) clearStreak() {
	c.failures = 0
	c.streakHint, c.lastFail = time.Time{}, time.Time{}
}

// count adds a failure dated at to the current streak, with its hint.
func (c *machine) count(f Failure, at time.Time) {
	c.failures++
	if at.After(c.lastFail) {
		c.lastFail = at
	}
	if f.Hint.After(c.streakHint) {
		c.streakHint = f.Hint
	}
}

// cooldown applies Fallback -> Recovering once the cooldown has ended. Only
// begin calls it.
func (c *machine) cooldown(clk *clock, rec *recorder) {
	if c.state != Fallback {
		return
	}
	if clk.since(c.cooldownEnd) < 0 {
		return
	}
	now := clk.now()
	from := c.fallbackModel()
	c.state = Recovering
	c.changeState()
	c.clearStreak()
	c.probeSuccesses = 0
	t := Transition{From: Fallback, To: Recovering, FromModel: from, ToModel: c.cfg.primary, At: now}
	if c.cause == CauseManual {
		t.Manual, t.Reason, t.Until = "hold_end", c.holdReason, c.cooldownEnd
	}
	rec.emit(t)
}

// changeState starts a new generation for a state change or Reset: tickets
// issued before it never close or re-open anything.
func (c *machine) changeState() {
	c.gen++
	c.changed = c.gen
}

// trip moves Primary or Recovering to Fallback at at; f tripped, raise says
// whether the opening counts in n (§9.1). The cooldown ends at the later of
// at + c(n) and the streak's latest hint, or at + QuotaCooldown at least for
// a Quota failure without a hint.
func (c *machine) trip(at time.Time, f Failure, raise bool, rec *recorder) {
	c.opening(at, raise)
	end, cause := at.Add(c.tripCooldown()), CauseRecoveryTimeout
	if c.trips > 1 && c.cfg.backoff > 1 {
		cause = CauseBackoff
	}
	if c.streakHint.After(end) {
		end, cause = c.streakHint, CauseHint
	}
	if f.Kind == Quota {
		cause = CauseQuota
		if q := at.Add(c.cfg.quotaCooldown); f.Hint.IsZero() && q.After(end) {
			end = q
		}
	}
	from := c.state
	if from == Primary && c.win != nil {
		c.win.Reset() // every transition out of Primary clears the window (§8.1)
	}
	c.state = Fallback
	c.changeState()
	c.clearStreak()
	c.probeSuccesses = 0
	c.trippedAt, c.cooldownEnd, c.cause = at, end, cause
	c.activated = true
	c.probing, c.probeStart = false, time.Time{}
	rec.emit(Transition{From: from, To: Fallback, FromModel: c.cfg.primary, ToModel: c.fallbackModel(), At: at})
}

// recover moves Recovering to Primary.
func (c *machine) recover(at time.Time, rec *recorder) {
	c.closedAt = at
	c.toPrimary()
	rec.emit(Transition{From: Recovering, To: Primary, FromModel: c.cfg.primary, ToModel: c.cfg.primary, At: at})
}

// probeFailed applies a probe failure dated at (the slot is already free): a
// rate limit of any kind re-trips at once, without raising n (§9.1) unless
// the failure also reaches TripThreshold.
func (c *machine) probeFailed(f Failure, at time.Time, rec *recorder) {
	c.probeSuccesses = 0
	c.count(f, at)
	threshold := c.failures >= c.cfg.tripThreshold
	if f.Kind == RateLimit || f.Kind == Quota || threshold {
		c.trip(at, f, threshold, rec)
	}
}

// probeSucceeded applies a probe success (the slot is already free).
func (c *machine) probeSucceeded(at time.Time, rec *recorder) {
	c.clearStreak()
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
	uncounted bool   // a chain entry serving a turn in Primary: its verdict counts nothing
}

// begin is the gate: lazy lease expiry, cooldown, then routing. a is the turn
// (nil: a turn without memory, Manager.Begin). It never writes to chain.
func (c *machine) begin(clk *clock, rec *recorder, a *Attempts) route {
	c.expireLease(clk, rec)
	c.cooldown(clk, rec)
	probed, alt, primarySlow := false, -1, false
	if a != nil {
		probed, alt, primarySlow = a.probed.Load(), c.usableEntry(a, -1), a.slow(0)
	}
	switch c.state {
	case Primary:
		if primarySlow && alt >= 0 {
			return route{entry: alt, uncounted: true}
		}
		return route{entry: -1}
	case Recovering:
		if !c.probing && !probed {
			if primarySlow && alt >= 0 {
				return route{entry: alt}
			}
			if c.probeSeq++; c.probeSeq == 0 { // 0 means "not a probe"
				c.probeSeq = 1
			}
			c.probing, c.probeStart = true, clk.now()
			return route{entry: -1, probe: c.probeSeq}
		}
	}
	if len(c.chain) == 0 {
		return route{entry: -1, exhausted: probed || c.held()}
	}
	i := c.active()
	switch {
	case i < 0:
		return route{entry: -1, exhausted: true}
	case a != nil && a.slow(i+1) && alt >= 0:
		return route{entry: alt}
	}
	return route{entry: i}
}

// usableEntry returns the first chain entry that is not failed, has not
// failed turn a slowly and is not skip; -1 if none.
func (c *machine) usableEntry(a *Attempts, skip int) int {
	for i, e := range c.chain {
		if !e.disabled && e.attempts < c.cfg.maxFail && i != skip && !a.slow(i+1) {
			return i
		}
	}
	return -1
}

// verdict is how a ticket is settled.
type verdict int

const (
	success verdict = iota
	failure
	cancel
	slowSuccess // a success of the primary whose first content came late (§8.2)
	slowProbe   // a probe whose first content came later than SlowCallAfter (§9.2)
)

// settle applies the verdict of ticket t (already known to be its first
// settlement) to the model that served it; f is a failure's report.
func (c *machine) settle(t *Ticket, v verdict, f Failure, clk *clock, rec *recorder) {
	c.expireLease(clk, rec)
	c.expireDisables(clk, rec)
	if t.probe() != 0 {
		c.settleProbe(t, v, f, clk, rec)
		return
	}
	if v == cancel {
		return
	}
	if t.entry() >= 0 {
		c.settleEntry(t, v, f, clk, rec)
		return
	}
	// Served by the primary outside a probe: counts only in Primary, and only
	// for a ticket issued since the latest state change.
	if c.state != Primary || t.gen < c.changed {
		return
	}
	// Stale failures: tickets are ordered by gen, which also moves
	// on the first failure after a clean streak and on every counted success
	// (one that resets a nonzero streak), so that a failure of a ticket
	// issued before a counted success's ticket is known to be older.
	if v == success || v == slowSuccess {
		if c.failures > 0 {
			c.proven = max(c.proven, t.gen)
			c.clearStreak()
			c.gen++
		}
		if v == slowSuccess && c.record(clk, ratewindow.SlowSuccess) {
			c.trip(clk.now(), Failure{}, true, rec)
		} else if v == success {
			c.record(clk, ratewindow.Success)
		}
		return
	}
	if t.gen < c.proven {
		return // stale: a newer turn on the primary succeeded
	}
	if c.failures == 0 {
		c.gen++
	}
	c.count(f, c.failureTime(f, clk))
	rate := c.record(clk, ratewindow.Failure)
	if raise := c.failures >= c.cfg.tripThreshold || rate; raise || f.Kind == Quota {
		c.trip(c.lastFail, f, raise, rec) // a quota alone opens without raising n (§9.1)
	}
}

// record counts a verdict of the primary's own turn in Primary in the
// window, if any, and reports whether the window trips (§8.1, §8.2).
func (c *machine) record(clk *clock, o ratewindow.Outcome) bool {
	if c.win == nil {
		return false
	}
	return c.win.Record(int64(clk.sinceEpoch()), o, c.cfg.rule)
}

// failureTime is when a failure (not a probe's) happened: now, or for a
// timeout now − its reported Elapsed (§8.4).
func (c *machine) failureTime(f Failure, clk *clock) time.Time {
	now := clk.now()
	if f.Timeout && f.Elapsed > 0 {
		return now.Add(-f.Elapsed)
	}
	return now
}

// settleProbe applies the verdict of a probe ticket.
func (c *machine) settleProbe(t *Ticket, v verdict, f Failure, clk *clock, rec *recorder) {
	if c.state != Recovering || !c.probing || c.probeSeq != t.probe() || c.gen != t.gen {
		return // a stale probe: its lease expired, or the state moved on
	}
	c.probing, c.probeStart = false, time.Time{}
	switch v {
	case success:
		c.proven = max(c.proven, t.gen) // a probe success is counted
		c.probeSucceeded(clk.now(), rec)
	case failure:
		c.probeFailed(f, clk.now(), rec)
	case slowProbe:
		c.slowProbe(clk.now(), rec)
	}
	// cancel: the slot is free, nothing else changes
}

// settleEntry applies the verdict of a ticket served by a chain entry: a
// failure spends its budget while live (a Quota failure all of it).
func (c *machine) settleEntry(t *Ticket, v verdict, f Failure, clk *clock, rec *recorder) {
	if v == success || c.epoch != t.epoch {
		return
	}
	before := c.active()
	e := &c.chain[t.entry()]
	e.attempts++
	if f.Kind == Quota {
		e.attempts = max(e.attempts, c.cfg.maxFail)
	}
	c.advanced(before, clk, rec)
}
