package fallback

import (
	"slices"
	"time"
)

// refModel is an independent, deliberately plain implementation of SEMANTICS
// section 3 used as the oracle of the property test. It tracks tickets as
// records (not by generation numbers): a ticket is "current" while no state
// change or Reset happened since it was issued, and the probe is a pointer to
// the live probe ticket.
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

	events []Transition
}

type refTicket struct {
	model    string
	entry    int // -1: the primary
	probe    bool
	history  int
	budgets  int
	settled  bool
	exhausts bool
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
	t := &refTicket{entry: -1, model: r.primary, history: r.history, budgets: r.budgets}
	if r.state == Primary {
		return t
	}
	if r.state == Recovering && r.probe == nil {
		t.probe = true
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
			r.fails = 0
			return
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
