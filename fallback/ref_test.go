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
	primary string
	chain   []string
	th      int // TripThreshold
	need    int // RecoverySuccessesNeeded
	strikes int // MaxFailCount
	cool    time.Duration
	lease   time.Duration

	state     State
	fails     int
	succ      int
	trippedAt time.Time
	activated bool
	attempts  []int
	disabled  []bool

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
}

func newRef(s Settings) *refModel {
	r := &refModel{
		primary: s.Primary, chain: slices.Clone(s.Chain),
		th: s.TripThreshold, need: s.RecoverySuccessesNeeded, strikes: s.MaxFailCount,
		cool: s.RecoveryTimeout, lease: s.ProbeTimeout,
		attempts: make([]int, len(s.Chain)), disabled: make([]bool, len(s.Chain)),
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
	return r
}

func (r *refModel) clone() *refModel {
	c := *r
	c.attempts = slices.Clone(r.attempts)
	c.disabled = slices.Clone(r.disabled)
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
	if st != Fallback || len(r.chain) == 0 {
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
	r.events = append(r.events, Transition{From: from, To: to, FromModel: fromModel, ToModel: r.modelOf(to), At: at})
}

func (r *refModel) tripAt(at time.Time) {
	r.fails, r.succ = 0, 0
	r.trippedAt = at
	r.activated = true
	r.move(Fallback, at)
}

func (r *refModel) probeFailure(k Kind, at time.Time) {
	r.succ = 0
	r.fails++
	if k == RateLimit || r.fails >= r.th {
		r.tripAt(at)
	}
}

func (r *refModel) lazy(now time.Time) {
	if r.state == Recovering && r.probe != nil && now.Sub(r.probeStart) >= r.lease {
		r.probe = nil
		r.probeFailure(Transient, r.probeStart.Add(r.lease))
	}
}

// begin returns the ticket the gate hands out (exhausts set on ErrExhausted).
func (r *refModel) begin(now time.Time) *refTicket {
	r.lazy(now)
	if r.state == Fallback && now.Sub(r.trippedAt) >= r.cool {
		r.fails, r.succ = 0, 0
		r.move(Recovering, now)
	}
	r.serials++
	t := &refTicket{entry: -1, model: r.primary, history: r.history, budgets: r.budgets, serial: r.serials, era: r.era}
	if r.state == Primary {
		return t
	}
	if r.state == Recovering && r.probe == nil {
		t.probe, t.end = true, now.Add(r.lease)
		r.probe, r.probeStart = t, now
		return t
	}
	if len(r.chain) == 0 {
		return t
	}
	if i := r.firstActive(); i >= 0 {
		t.entry, t.model = i, r.chain[i]
		return t
	}
	return &refTicket{exhausts: true, model: ""}
}

func (r *refModel) peek(now time.Time) string { return r.clone().begin(now).model }

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
	r.events = append(r.events, Transition{From: Fallback, To: Fallback, FromModel: name(before), ToModel: name(after), At: now})
}

const (
	vSuccess = iota
	vTransient
	vRateLimit
	vCancel
)

func (r *refModel) settle(t *refTicket, v int, now time.Time) {
	if t.settled {
		return
	}
	t.settled = true
	r.lazy(now)
	switch {
	case t.probe:
		if r.probe != t {
			return
		}
		r.probe = nil
		switch v {
		case vSuccess:
			r.proved(t)
			r.fails = 0
			r.succ++
			if r.succ >= r.need {
				r.fails, r.succ = 0, 0
				r.trippedAt = time.Time{}
				clear(r.attempts)
				r.budgets++
				r.move(Primary, now)
			}
		case vTransient:
			r.probeFailure(Transient, now)
		case vRateLimit:
			r.probeFailure(RateLimit, now)
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
			r.fails = 0
			return
		}
		if r.stale(t) {
			return
		}
		if r.fails == 0 {
			r.era++
		}
		r.fails++
		if r.fails >= r.th {
			r.tripAt(now)
		}
	default:
		if v == vSuccess || t.budgets != r.budgets {
			return
		}
		before := r.firstActive()
		r.attempts[t.entry]++
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
	r.lazy(now)
	before := r.firstActive()
	r.disabled[i] = !ok
	r.advanceEvent(before, now)
}

func (r *refModel) reset(now time.Time) {
	r.lazy(now)
	if r.state != Primary {
		r.move(Primary, now) // names the model routed to before the reset
	} else {
		r.history++
		r.era++
		r.probe = nil
	}
	r.fails, r.succ = 0, 0
	r.trippedAt = time.Time{}
	r.activated = false
	clear(r.attempts)
	r.budgets++
}

// snapshot is what Manager.Snapshot should report at now.
func (r *refModel) snapshot(now time.Time) Snapshot {
	c := r.clone()
	c.lazy(now)
	s := Snapshot{
		State: c.state, ConsecutiveFailures: c.fails, ProbeSuccesses: c.succ,
		TrippedAt: c.trippedAt, FallbackActivated: c.activated,
	}
	if c.probe != nil {
		s.ProbeStartedAt = c.probeStart
	}
	for i, m := range c.chain {
		s.Chain = append(s.Chain, Entry{Model: m, Attempts: c.attempts[i], Available: !c.disabled[i], Failed: c.isFailed(i)})
	}
	return s
}
