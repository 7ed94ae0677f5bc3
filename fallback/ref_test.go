package fallback

import (
	"fmt"
	"slices"
	"time"
)

// refModel is an independent, deliberately plain implementation of SEMANTICS
// section 3 used as the oracle of the property test. It tracks tickets as
// records (not by generation numbers): a ticket is "current" while no state
// change or Reset happened since it was issued, and the probe is a pointer to
// the live probe ticket.
//
// Stale failures (rev 2): every ticket carries its exact issue order (a serial
// number) and a coarse one, an era the model bumps exactly where SEMANTICS
// allows ordering coarsely: on every state change and Reset, on the first
// failure of the primary after a clean streak, and on a success that reset the
// primary's nonzero streak. A failure of the primary is stale when its era is
// older than the era of the latest-issued counted success on the primary (one
// that reset a nonzero streak, or a probe success). A chain entry's success
// resets no streak, so it is never counted, and a primary success says
// nothing about an entry: an entry's failure is never stale. The model checks
// its coarse order against the exact one: a failure it calls stale must have
// been issued before a counted success.
type refModel struct {
	act struct { // the operator's act under way: its transitions carry it
		name, why string
		until     time.Time
	}
	primary string
	chain   []string
	th      int // TripThreshold
	need    int // RecoverySuccessesNeeded
	strikes int // MaxFailCount
	cool    time.Duration
	lease   time.Duration
	quotaCD time.Duration // QuotaCooldown
	hedging bool          // HedgeAfter set
	feed    float64       // HedgeBudget
	bucket  float64       // the hedge bucket

	state     State
	fails     int
	succ      int
	trippedAt time.Time
	coolEnd   time.Time // rev 3: when the cooldown ends
	cause     Cause
	hint      time.Time // latest hint of the current streak
	lastFail  time.Time // latest failure time of the current streak
	activated bool
	attempts  []int
	disabled  []bool
	disUntil  []time.Time // rev 4: a manual disable's end (zero: until enabled)
	disReason []string
	holdWhy   string // rev 4: the reason of the latest hold

	probe      *refTicket // the live probe, nil if none
	probeStart time.Time

	history int // bumped on every state change and Reset
	budgets int // bumped when the chain budgets are renewed (recovery, Reset)

	serials      int // tickets issued so far: the exact issue order
	era          int // the coarse issue order of tickets issued now
	provenEra    int // era of the latest-issued counted success on the primary
	provenSerial int // serial of the latest-issued counted success on the primary
	unsound      string
	stales       int // stale failures seen (coverage)

	events []Transition

	r4 ref4       // the window, the slow-call rule and the retry budgets (ref_window_test.go)
	r5 refBackoff // the trip count, its cooldowns and the slow probe (refbackoff_test.go)
}

type refTicket struct {
	serial   int
	era      int
	model    string
	entry    int // -1: the primary
	probe    bool
	history  int
	budgets  int
	settled  bool
	exhausts bool
	end      time.Time // a probe's lease end
	issued   time.Time
	free     bool     // a chain entry serving a turn in Primary: counts nothing
	turn     *refTurn // the turn of a ticket begun by Next or Hedge
}

// refTurn is the reference's memory of one turn (Attempts).
type refTurn struct {
	probed    bool
	slow      map[string]bool
	probeFail *Failure
	begun     bool
	fed       map[string]bool // rev 4: the models whose retry budget the turn has fed
}

// routePast is Attempts.RoutePast: the turn passes model as one it failed
// slowly, and nothing else changes.
func (u *refTurn) routePast(model string) {
	if u.slow == nil {
		u.slow = map[string]bool{}
	}
	u.slow[model] = true
}

func newRef(s Settings) *refModel {
	r := &refModel{
		primary: s.Primary, chain: slices.Clone(s.Chain),
		th: s.TripThreshold, need: s.RecoverySuccessesNeeded, strikes: s.MaxFailCount,
		cool: s.RecoveryTimeout, lease: s.ProbeTimeout, quotaCD: s.QuotaCooldown,
		hedging: s.HedgeAfter > 0, feed: s.HedgeBudget, bucket: 10,
		attempts: make([]int, len(s.Chain)), disabled: make([]bool, len(s.Chain)),
		disUntil: make([]time.Time, len(s.Chain)), disReason: make([]string, len(s.Chain)),
	}
	if r.th == 0 {
		r.th = 3
	}
	if r.need == 0 {
		r.need = 2
	}
	if r.strikes == 0 {
		r.strikes = 2
	}
	if r.cool == 0 {
		r.cool = time.Minute
	}
	if r.lease == 0 {
		r.lease = 5 * time.Minute
	}
	if r.quotaCD == 0 {
		r.quotaCD = 10 * time.Minute
	}
	if r.feed == 0 {
		r.feed = 0.1
	}
	r.r4 = newRef4(s)
	r.r5 = newRefBackoff(s, r.cool)
	return r
}

func (r *refModel) clone() *refModel {
	c := *r
	c.attempts = slices.Clone(r.attempts)
	c.disabled = slices.Clone(r.disabled)
	c.disUntil = slices.Clone(r.disUntil)
	c.disReason = slices.Clone(r.disReason)
	c.events = nil
	return &c
}

func (r *refModel) isFailed(i int) bool { return r.disabled[i] || r.attempts[i] >= r.strikes }

func (r *refModel) firstActive() int {
	for i := range r.chain {
		if !r.isFailed(i) {
			return i
		}
	}
	return -1
}

func (r *refModel) modelOf(st State) string {
	if st != Fallback {
		return r.primary
	}
	if len(r.chain) == 0 {
		if r.held() {
			return "" // held with no chain: nowhere
		}
		return r.primary
	}
	if i := r.firstActive(); i >= 0 {
		return r.chain[i]
	}
	return ""
}

func (r *refModel) move(to State, at time.Time) {
	from := r.state
	fromModel := r.modelOf(from)
	r.state = to
	r.history++
	r.era++
	r.probe = nil
	r.emit(Transition{From: from, To: to, FromModel: fromModel, ToModel: r.modelOf(to), At: at})
}

// emit records t, stamped with the operator's act under way (r.act).
func (r *refModel) emit(t Transition) {
	if t.Manual == "" {
		t.Manual, t.Reason, t.Until = r.act.name, r.act.why, r.act.until
	}
	r.events = append(r.events, t)
}

// acting runs f with the operator's act named name (why, until) under way.
func (r *refModel) acting(name, why string, until time.Time, f func()) {
	outer := r.act
	r.act.name, r.act.why, r.act.until = name, why, until
	f()
	r.act = outer
}

// tripAt trips at at, f being the failure that tripped and raise whether the
// opening counts in n: the cooldown ends at the latest of at + c(n), the
// streak's hints, and for a Quota failure without a hint at + QuotaCooldown.
func (r *refModel) tripAt(at time.Time, f Failure, raise bool) {
	cool := r.r5.open(r.state, at, raise)
	r.coolEnd, r.cause = at.Add(cool), CauseRecoveryTimeout
	if r.r5.n > 1 && r.r5.f > 1 {
		r.cause = CauseBackoff
	}
	if r.hint.After(r.coolEnd) {
		r.coolEnd, r.cause = r.hint, CauseHint
	}
	if f.Kind == Quota {
		r.cause = CauseQuota
		if f.Hint.IsZero() && at.Add(r.quotaCD).After(r.coolEnd) {
			r.coolEnd = at.Add(r.quotaCD)
		}
	}
	r.zero()
	r.trippedAt = at
	r.activated = true
	if r.state == Primary {
		r.r4.clear() // every transition out of Primary clears the window
	}
	r.move(Fallback, at)
}

// zero clears the streak.
func (r *refModel) zero() {
	r.fails, r.succ = 0, 0
	r.hint, r.lastFail = time.Time{}, time.Time{}
}

// note counts a failure of the streak.
func (r *refModel) note(f Failure, at time.Time) {
	r.fails++
	if f.Hint.After(r.hint) {
		r.hint = f.Hint
	}
	if at.After(r.lastFail) {
		r.lastFail = at
	}
}

func (r *refModel) probeFailure(f Failure, at time.Time) {
	r.succ = 0
	r.note(f, at)
	if f.Kind == RateLimit || f.Kind == Quota || r.fails >= r.th {
		r.tripAt(at, f, r.fails >= r.th)
	}
}

func (r *refModel) lazy(now time.Time) {
	if r.state == Recovering && r.probe != nil && now.Sub(r.probeStart) >= r.lease {
		r.probe = nil
		r.acting("", "", time.Time{}, func() { r.probeFailure(Failure{}, r.probeStart.Add(r.lease)) })
	}
}

// begin returns the ticket the gate hands out (exhausts set on ErrExhausted)
// for the turn u (nil: Begin).
func (r *refModel) begin(now time.Time, u *refTurn) *refTicket {
	r.lazy(now)
	r.expireDis(now)
	if r.state == Fallback && !now.Before(r.coolEnd) {
		r.zero()
		if r.cause == CauseManual {
			r.acting("hold_end", r.holdWhy, r.coolEnd, func() { r.move(Recovering, now) })
		} else {
			r.move(Recovering, now)
		}
	}
	r.serials++
	t := &refTicket{entry: -1, model: r.primary, history: r.history, budgets: r.budgets, serial: r.serials, era: r.era, issued: now, turn: u}
	if u == nil {
		u = &refTurn{}
	}
	// the first chain entry usable for u: not failed, not failed u slowly
	alt := -1
	for i := range r.chain {
		if !r.isFailed(i) && !u.slow[r.chain[i]] {
			alt = i
			break
		}
	}
	past := func() *refTicket {
		t.entry, t.model, t.free = alt, r.chain[alt], r.state == Primary
		return t
	}
	if r.state == Primary {
		if u.slow[r.primary] && alt >= 0 {
			return past()
		}
		return t
	}
	if r.state == Recovering && r.probe == nil && !u.probed {
		if u.slow[r.primary] && alt >= 0 {
			return past()
		}
		t.probe, t.end = true, now.Add(r.lease)
		r.probe, r.probeStart = t, now
		u.probed = true
		return t
	}
	if len(r.chain) == 0 {
		if u.probed || r.held() {
			return &refTicket{exhausts: true, model: ""}
		}
		return t
	}
	i := r.firstActive()
	switch {
	case i < 0:
		return &refTicket{exhausts: true, model: ""}
	case u.slow[r.chain[i]] && alt >= 0:
		return past()
	}
	t.entry, t.model = i, r.chain[i]
	return t
}

// probeAt is the ExhaustedError's ProbeAt for a refusal at now.
func (r *refModel) probeAt(now time.Time) time.Time {
	switch {
	case r.state == Recovering && r.probe != nil:
		return r.probeStart.Add(r.lease)
	case r.state == Recovering:
		return now
	}
	return r.coolEnd
}

// usable is Attempts.Usable for u.
func (r *refModel) usable(now time.Time, u *refTurn) bool {
	c := r.clone()
	cu := &refTurn{probed: u.probed, slow: u.slow}
	t := c.begin(now, cu)
	return !t.exhausts && !u.slow[t.model]
}

// nextModel is Attempts.NextModel for u: where Next would route u, when
// that is a model u has not failed slowly nor routed past.
func (r *refModel) nextModel(now time.Time, u *refTurn) (string, bool) {
	c := r.clone()
	t := c.begin(now, &refTurn{probed: u.probed, slow: u.slow})
	if t.exhausts || u.slow[t.model] {
		return "", false
	}
	return t.model, true
}

// hedge is Manager.Hedge for the turn u whose running attempt is on model
// running: the first chain entry usable for u other than running's.
func (r *refModel) hedge(now time.Time, u *refTurn, running string) *refTicket {
	if !r.hedging {
		return nil
	}
	r.lazy(now)
	r.expireDis(now)
	for i, m := range r.chain {
		if r.isFailed(i) || u.slow[m] || m == running {
			continue
		}
		if r.bucket < 1 {
			return nil
		}
		r.bucket--
		r.serials++
		return &refTicket{entry: i, model: m, history: r.history, budgets: r.budgets, serial: r.serials, era: r.era,
			issued: now, turn: u, free: r.state == Primary}
	}
	return nil
}

// next is Manager.Next for u: the turn's first Next feeds the hedge bucket.
func (r *refModel) next(now time.Time, u *refTurn) *refTicket {
	if !u.begun {
		u.begun = true
		if r.hedging {
			r.bucket = min(10, r.bucket+r.feed)
		}
	}
	return r.begin(now, u)
}

func (r *refModel) peek(now time.Time) string { return r.clone().begin(now, nil).model }

func (r *refModel) advanceEvent(before int, now time.Time) {
	after := r.firstActive()
	if r.state != Fallback || after == before {
		return
	}
	name := func(i int) string {
		if i < 0 {
			return ""
		}
		return r.chain[i]
	}
	r.emit(Transition{From: Fallback, To: Fallback, FromModel: name(before), ToModel: name(after), At: now})
}

const (
	vSuccess = iota
	vTransient
	vRateLimit
	vCancel
	vLost
	vQuota
	vSlowProbe // a probe settled by SuccessAfter later than SlowCallAfter (§9.2)
)

// settle applies verdict v (with the report f of a failure) of t at now.
func (r *refModel) settle(t *refTicket, v int, f Failure, now time.Time) {
	if t.settled {
		return
	}
	t.settled = true
	failed := v == vTransient || v == vRateLimit || v == vQuota
	if u := t.turn; u != nil && failed {
		if f.Timeout || f.Kind == RateLimit || f.Kind == Quota {
			if u.slow == nil {
				u.slow = map[string]bool{}
			}
			u.slow[t.model] = true
		}
		if t.probe {
			u.probeFail = &f
		}
	}
	// A success or cancel that cannot change anything takes the manager's
	// lock-free path (outside Recovering, and in Primary only with no
	// failures pending): the disables' ends are applied by a later call.
	quiet := v != vTransient && v != vRateLimit && v != vQuota && !t.probe &&
		r.state != Recovering && (r.state != Primary || r.fails == 0)
	r.lazy(now)
	if !quiet {
		r.expireDis(now)
	}
	switch {
	case t.probe:
		if r.probe != t {
			return
		}
		r.probe = nil
		switch v {
		case vSuccess:
			r.proved(t)
			succ := r.succ + 1
			r.zero()
			r.succ = succ
			if r.succ >= r.need {
				r.zero()
				r.trippedAt, r.coolEnd, r.cause = time.Time{}, time.Time{}, 0
				clear(r.attempts)
				r.budgets++
				r.r4.clear()
				r.r5.closed = now
				r.move(Primary, now)
			}
		case vTransient, vRateLimit, vQuota:
			r.probeFailure(f, now)
		case vSlowProbe:
			r.succ = 0
			r.tripAt(now, Failure{}, true)
		}
	case v == vCancel:
	case t.entry < 0:
		if r.state != Primary || t.history != r.history {
			return
		}
		if v == vSuccess {
			if r.fails > 0 {
				r.proved(t)
				r.era++
			}
			r.zero()
			if r.r4.record(now, r.r4.takeSlow()) {
				r.tripAt(now, Failure{}, true) // a slow success tripped the slow-call rate
			}
			return
		}
		if r.stale(t) {
			return
		}
		if r.fails == 0 {
			r.era++
		}
		at := now
		if f.Timeout && f.Elapsed > 0 {
			at = now.Add(-f.Elapsed) // a timeout is dated at its call's start (rev 3, §8.4)
		}
		r.note(f, at)
		rate := r.r4.record(now, refFailed)
		if f.Kind == Quota || r.fails >= r.th || rate {
			r.tripAt(r.lastFail, f, r.fails >= r.th || rate)
		}
	default:
		if v == vSuccess || t.budgets != r.budgets || t.free {
			return
		}
		before := r.firstActive()
		r.attempts[t.entry]++
		if f.Kind == Quota {
			r.attempts[t.entry] = max(r.attempts[t.entry], r.strikes)
		}
		r.advanceEvent(before, now)
	}
}

// proved records a counted success on the primary of ticket t.
func (r *refModel) proved(t *refTicket) {
	r.provenEra = max(r.provenEra, t.era)
	r.provenSerial = max(r.provenSerial, t.serial)
}

// stale reports whether a failure of t on the primary is old news.
func (r *refModel) stale(t *refTicket) bool {
	if t.era >= r.provenEra {
		return false
	}
	if t.serial >= r.provenSerial {
		r.unsound = fmt.Sprintf("the failure of ticket %d was called stale; the latest counted success is ticket %d", t.serial, r.provenSerial)
	}
	r.stales++
	return true
}

func (r *refModel) setAvailable(i int, ok bool, now time.Time) {
	r.toggle(i, !ok, time.Time{}, "", now)
}

// disable is Manager.Disable (off) or Enable of entry i (rev 4).
func (r *refModel) disable(i int, off bool, until time.Time, why string, now time.Time) {
	name := "enable"
	if off {
		name = "disable"
	}
	r.acting(name, why, until, func() { r.toggle(i, off, until, why, now) })
}

// toggle disables (off) or enables entry i.
func (r *refModel) toggle(i int, off bool, until time.Time, why string, now time.Time) {
	r.lazy(now)
	r.expireDis(now)
	if !until.IsZero() && !now.Before(until) {
		off = false
	}
	before := r.firstActive()
	r.disabled[i], r.disUntil[i], r.disReason[i] = off, time.Time{}, ""
	if off {
		r.disUntil[i], r.disReason[i] = until, why
	}
	r.advanceEvent(before, now)
}

// expireDis enables the entries whose disable has ended (one event).
func (r *refModel) expireDis(now time.Time) {
	before := r.firstActive()
	why, until := "", time.Time{}
	for i := range r.chain {
		if r.disabled[i] && !r.disUntil[i].IsZero() && !now.Before(r.disUntil[i]) {
			if until.IsZero() {
				why, until = r.disReason[i], r.disUntil[i]
			}
			r.disabled[i], r.disUntil[i], r.disReason[i] = false, time.Time{}, ""
		}
	}
	r.acting("disable_end", why, until, func() { r.advanceEvent(before, now) })
}

// held reports a hold in force (the gate moves an ended one to Recovering).
func (r *refModel) held() bool { return r.state == Fallback && r.cause == CauseManual }

// hold is Manager.Hold (SEMANTICS §8.5).
func (r *refModel) hold(until time.Time, why string, now time.Time) {
	r.lazy(now)
	r.expireDis(now)
	r.acting("hold", why, until, func() { r.holdNow(until, why, now) })
}

func (r *refModel) holdNow(until time.Time, why string, now time.Time) {
	if r.state != Fallback {
		if r.state == Primary {
			r.r4.clear() // a hold is a trip: out of Primary, the window clears
		}
		r.zero()
		r.r5.open(r.state, now, false) // a hold keeps n (from Primary it may forget an old one)
		r.trippedAt, r.activated = now, true
		r.coolEnd, r.cause, r.holdWhy = until, CauseManual, why
		r.move(Fallback, now)
		return
	}
	before := r.modelOf(Fallback)
	if until.After(r.coolEnd) {
		r.coolEnd = until
	}
	r.cause, r.holdWhy = CauseManual, why
	if after := r.modelOf(Fallback); after != before {
		r.emit(Transition{From: Fallback, To: Fallback, FromModel: before, ToModel: after, At: now})
	}
}

// release is Manager.Release.
func (r *refModel) release(now time.Time) {
	if r.held() && now.Before(r.coolEnd) {
		r.coolEnd = now
	}
}

func (r *refModel) reset(now time.Time) {
	r.lazy(now)
	r.expireDis(now)
	r.r5.n = 0
	if r.state != Primary {
		r.r5.closed = now
		r.acting("reset", "", time.Time{}, func() { r.move(Primary, now) }) // names the model routed to before the reset
	} else {
		r.history++
		r.era++
		r.probe = nil
	}
	r.zero()
	r.trippedAt, r.coolEnd, r.cause = time.Time{}, time.Time{}, 0
	r.activated = false
	clear(r.attempts)
	r.budgets++
	r.r4.clear()
}

// snapshot is what Manager.Snapshot should report at now.
func (r *refModel) snapshot(now time.Time) Snapshot {
	c := r.clone()
	c.lazy(now)
	s := Snapshot{
		State: c.state, ConsecutiveFailures: c.fails, ProbeSuccesses: c.succ,
		TrippedAt: c.trippedAt, FallbackActivated: c.activated,
		CooldownEnds: c.coolEnd, CooldownCause: c.cause,
		Trips: c.r5.read(c.state, now),
	}
	if c.probe != nil {
		s.ProbeStartedAt = c.probeStart
	}
	if c.held() && now.Before(c.coolEnd) {
		s.HoldUntil, s.HoldReason = c.coolEnd, c.holdWhy
	}
	c.expireDis(now)
	for i, m := range c.chain {
		s.Chain = append(s.Chain, Entry{Model: m, Attempts: c.attempts[i], Available: !c.disabled[i], Failed: c.isFailed(i),
			DisabledUntil: c.disUntil[i], DisabledReason: c.disReason[i]})
	}
	return s
}
