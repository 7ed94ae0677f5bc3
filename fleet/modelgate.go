package fleet

import (
	"context"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// Turn is the ticket [ModelBreaker.Begin] hands out for one turn, with the
// methods of [fallback.Ticket]. It remembers the incarnation, generation and
// chain-budget epoch it was issued in, the entry that serves it and, for the
// probe of the primary, the probe's number (with the generation, the fencing
// token). Settle it once. The zero Turn names no model and does nothing.
type Turn struct {
	m      *ModelBreaker
	local  *fallback.Ticket // issued by the local manager while the store was down
	lm     *fallback.Manager
	ep     uint64
	gen    uint64
	ce     uint64
	probe  uint64
	entry  int   // -1: the primary
	dl     int64 // probe: the lease end, local Unix ns
	issued int64 // when it was issued, store µs (a timeout is dated then)
	unc    bool  // a chain entry serving a turn in Primary: its verdict counts nothing
}

// Model returns the model to send the turn to ("" for the zero Turn).
func (t Turn) Model() string {
	switch {
	case t.local != nil:
		return t.local.Model()
	case t.m == nil:
		return ""
	case t.entry < 0:
		return t.m.set.Primary
	}
	return t.m.set.Chain[t.entry]
}

// IsProbe reports whether the turn is the probe of the primary.
func (t Turn) IsProbe() bool {
	if t.local != nil {
		return t.local.IsProbe()
	}
	return t.probe != 0
}

// Deadline returns the probe's lease end and true for a probe ticket.
func (t Turn) Deadline() (time.Time, bool) {
	if t.local != nil {
		return t.local.Deadline()
	}
	if t.probe == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, t.dl), true
}

// Success reports that the turn succeeded (no round trip unless it can
// change something: the probe, or the primary with failures pending).
func (t Turn) Success() { t.settle("success", fallback.Failure{}) }

// Failure reports that the turn failed, with its kind. One round trip.
func (t Turn) Failure(k fallback.Kind) { t.settle("failure", fallback.Failure{Kind: k}) }

// Fail reports that the turn failed, with its report (kind, hint, timeout),
// as [fallback.Ticket.Fail]. One round trip. A timeout is dated at now −
// f.Elapsed when the caller reports it, else at the ticket's issue.
func (t Turn) Fail(f fallback.Failure) { t.settle("failure", f) }

// Cancel reports that the caller gave up: no verdict. A cancelled probe
// frees the slot (one round trip); any other cancel costs nothing.
func (t Turn) Cancel() { t.settle("cancel", fallback.Failure{}) }

func (t Turn) settle(op string, f fallback.Failure) {
	m := t.m
	if m == nil || t.unc {
		return
	}
	k := f.Kind
	mr := m.mirror.Load()
	if t.local != nil {
		if mr.mode == LocalMode && mr.local == t.lm {
			switch op {
			case "success":
				t.local.Success()
			case "failure", "trip": // the local manager keeps its own window
				t.local.Fail(f)
			default:
				t.local.Cancel()
			}
		}
		return // issued while the store was down, settled after: the store wins
	}
	if op != "failure" && op != "trip" && t.probe == 0 && mr.mode == Shared &&
		mr.st != fallback.Recovering && !(mr.st == fallback.Primary && mr.f > 0) {
		return // nothing would change
	}
	if mr.mode == Shared {
		kind := 0
		switch k {
		case fallback.RateLimit:
			kind = 1
		case fallback.Quota:
			kind = 2
		}
		x := extra{tmo: f.Timeout}
		if f.Timeout && f.Elapsed > 0 { // dated at the call's start, as the caller measured it
			t.issued = m.storeMicros() - f.Elapsed.Microseconds()
		}
		if !f.Hint.IsZero() {
			x.hint = m.s.clock.toStore(f.Hint)
		}
		sop, flag := op, 0
		if op == "trip" { // a failure that trips (a window's trip, SEMANTICS §8.1)
			sop, flag = "failure", 1
		}
		if _, err := m.script(context.Background(), sop, t, kind, flag, false, x); err == nil {
			return
		}
		mr = m.mirror.Load()
	}
	if mr.mode == LocalMode && (op == "failure" || op == "trip") && mr.local != nil {
		// a shared ticket settled while the store is down: fresh bad news for
		// the model that served it, counted on the local manager's current route
		if lt, err := mr.local.Begin(); err == nil {
			if lt.Model() == t.Model() {
				lt.Fail(f)
			} else {
				lt.Cancel()
			}
		}
	}
}

// Begin starts a turn, with the semantics of [fallback.Manager.Begin]
// applied to the fleet's one breaker. With no round trip it routes in
// Primary, and in Fallback before the cooldown's end; everything else is one
// script call. While the store is down it follows the Store's Policy.
func (m *ModelBreaker) Begin() (Turn, error) { return m.begin(extra{}) }

// begin is Begin for a turn with memory x (x.probed, x.slow; zero: none).
func (m *ModelBreaker) begin(x extra) (Turn, error) {
	mr := m.mirror.Load()
	if mr.mode == Shared {
		now := m.s.clock.storeNow()
		if x.slow == "" && !x.probed {
			if mr.st == fallback.Primary {
				return Turn{m: m, ep: mr.ep, gen: mr.g, ce: mr.ce, entry: -1, issued: now / 1000}, nil
			}
			if mr.st == fallback.Fallback && mr.route != -2 && now < mr.cen*1000 && (mr.dexp == 0 || now < mr.dexp*1000) &&
				!(m.n == 0 && mr.cause == fallback.CauseManual) {
				return Turn{m: m, ep: mr.ep, gen: mr.g, ce: mr.ce, entry: mr.route, issued: now / 1000}, nil
			}
		}
		v, err := m.script(context.Background(), "begin", Turn{entry: -1}, 0, 0, false, x)
		if err == nil {
			w := m.width()
			if int(v[w+1]) == -2 {
				return Turn{}, m.exhausted(v)
			}
			return m.ticket(v), nil
		}
		mr = m.mirror.Load()
	}
	switch mr.mode {
	case LocalMode:
		if mr.local != nil {
			lt, err := mr.local.Begin()
			if err != nil {
				return Turn{}, err
			}
			return Turn{m: m, local: &lt, lm: mr.local}, nil
		}
	case FailClosedMode:
		return Turn{}, &fallback.ExhaustedError{Primary: m.set.Primary, Chain: append([]string(nil), m.set.Chain...),
			State: mr.st, ProbeAt: time.Now().Add(m.s.retry), RetryIn: m.s.retry}
	}
	return Turn{m: m, entry: -1, ep: ^uint64(0)}, nil // FailOpen (or a race): the primary, verdict ignored
}

// ticket builds the Turn of a begin or hedge reply.
func (m *ModelBreaker) ticket(v []int64) Turn {
	w := m.width()
	t := Turn{m: m, ep: uint64(v[0]), gen: uint64(v[3]), ce: uint64(v[4]), probe: uint64(v[w+2]), entry: int(v[w+1]),
		issued: v[w], unc: v[w+3] != 0}
	if t.probe != 0 {
		t.dl = m.s.clock.toLocal(v[10] + m.tuned().lease).UnixNano()
	}
	return t
}

// hedge issues the hedge ticket of a turn whose slow models are x.slow, for
// the first usable chain entry other than x.skip; false if none or the store
// is down.
func (m *ModelBreaker) hedge(x extra) (Turn, bool) {
	if m.mirror.Load().mode != Shared {
		return Turn{}, false
	}
	v, err := m.script(context.Background(), "hedge", Turn{entry: -1}, 0, 0, false, x)
	if err != nil || v[m.width()+1] < 0 {
		return Turn{}, false
	}
	return m.ticket(v), true
}

// exhausted builds the refusal from a begin reply.
func (m *ModelBreaker) exhausted(v []int64) error {
	w := m.width()
	now := v[w]
	st := fallback.State(v[2])
	at := v[14+2*m.n] // the cooldown's end
	if st == fallback.Recovering {
		at = now // the turn has held its probe and the slot is free
		if v[9] != 0 {
			at = v[10] + m.tuned().lease
		}
	}
	return &fallback.ExhaustedError{Primary: m.set.Primary, Chain: append([]string(nil), m.set.Chain...),
		State: st, ProbeAt: m.s.clock.toLocal(at), RetryIn: time.Duration(max(at-now, 0)) * time.Microsecond,
		Held: st == fallback.Fallback && fallback.Cause(v[15+2*m.n]) == fallback.CauseManual}
}

// SetAvailable enables or disables a chain entry for the whole fleet (one
// round trip). The primary or a model not in the chain is an error matching
// [fallback.ErrNotInChain].
func (m *ModelBreaker) SetAvailable(model string, available bool) error {
	return m.setAvailable(model, available, extra{})
}

// setAvailable is SetAvailable, or with x.act "enable" an operator's enable
// with x.reason (Operate).
func (m *ModelBreaker) setAvailable(model string, available bool, x extra) error {
	i := -1
	for j, c := range m.set.Chain {
		if c == model {
			i = j
		}
	}
	if i < 0 {
		return m.localCheck().SetAvailable(model, available) // the same error as fallback's
	}
	flag := 0
	if available {
		flag = 1
	}
	if mr := m.mirror.Load(); mr.mode == Shared {
		x.reason = bounded(x.reason)
		if v, err := m.script(context.Background(), "avail", Turn{entry: -1}, i, flag, false, x); err == nil {
			m.note(i, "", reasonAt{uint64(v[0]), uint64(v[1])}) // a disable's reason ends with it (the store's too)
			return nil
		}
	}
	if mr := m.mirror.Load(); mr.mode == LocalMode && mr.local != nil {
		if x.act == "enable" {
			return mr.local.Enable(model)
		}
		return mr.local.SetAvailable(model, available)
	}
	return nil
}

// localCheck returns a throwaway manager with the same settings, used only
// to produce fallback's own validation errors.
func (m *ModelBreaker) localCheck() *fallback.Manager {
	s := m.tuned().set
	s.OnTransition = nil
	lm, _ := fallback.New(s)
	return lm
}

// Reset returns the shared breaker to Primary for the whole fleet (one round
// trip), as [fallback.Manager.Reset] does: an operator's act (its
// transition has Manual "reset" on every process).
func (m *ModelBreaker) Reset() { m.reset("") }

// reset is Reset with the act's reason (Operate).
func (m *ModelBreaker) reset(reason string) {
	if mr := m.mirror.Load(); mr.mode == Shared {
		x := extra{act: "reset", reason: bounded(reason)}
		if _, err := m.script(context.Background(), "reset", Turn{entry: -1}, 0, 0, false, x); err == nil {
			return
		}
	}
	if mr := m.mirror.Load(); mr.mode == LocalMode && mr.local != nil {
		mr.local.Reset()
	}
}

// Mode returns where the breaker's state lives now.
func (m *ModelBreaker) Mode() Mode { return m.mirror.Load().mode }
