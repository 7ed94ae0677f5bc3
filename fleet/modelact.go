package fleet

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loopctl/loopctl-go/fallback"
)

// An operator's act on a shared model breaker (a hold, a release, a
// disable, an enable, a reset: GATEWAY §9.2) travels with the state it
// writes, in the same script call (modelLua's act message), so that every
// process's Transition names the act, its reason and its end exactly as
// the acting process's does (fallback.Transition.Manual, Reason, Until): a
// replica that learns of a hold through the store never logs it as a
// failure. The ends an operator set passing (a hold's, a disable's) are
// read from the mirror, as package fallback reads them from its machine.

// MaxActReason is the longest reason, in bytes, that an operator's act
// writes to the store and its messages: a longer one is cut there, at a
// character's boundary, so that an act's message stays small.
const MaxActReason = 1024

// ErrUnknownAct is the error of [ModelBreaker.Operate] for an action it
// does not know.
var ErrUnknownAct = errors.New("fleet: unknown operator act")

// ActError is the error of [ModelBreaker.Operate] for an action it does not
// know; it matches [ErrUnknownAct].
type ActError struct {
	Action string // the action given
}

func (e *ActError) Error() string {
	return "fleet: unknown operator act " + strconv.Quote(e.Action) + " (want hold, release, disable, enable or reset)"
}

// Is reports whether target is ErrUnknownAct.
func (e *ActError) Is(target error) bool { return target == ErrUnknownAct }

// Operate applies an operator's act to the breaker for the whole fleet:
// action "hold" is [ModelBreaker.Hold] (until, reason), "release"
// [ModelBreaker.Release], "disable" [ModelBreaker.Disable] of the chain entry
// entry (until, reason), "enable" the entry's enable (SetAvailable(entry,
// true) as an operator's act: Transition.Manual "enable", as
// [fallback.Manager.Enable]) and "reset" [ModelBreaker.Reset]. reason
// reaches the Transition every process reports for the act (Reason), also
// for the acts that take none otherwise (enable, reset): the gateway signs
// it with the admin key's name, so that every replica's log names the
// operator. An unknown action is an [*ActError]; a bad entry the error
// Disable or SetAvailable gives.
func (m *ModelBreaker) Operate(action, entry, reason string, until time.Time) error {
	switch action {
	case "hold":
		m.Hold(until, reason)
	case "release":
		m.Release()
	case "disable":
		return m.Disable(entry, until, reason)
	case "enable":
		return m.setAvailable(entry, true, extra{act: "enable", reason: reason})
	case "reset":
		m.reset(reason)
	default:
		return &ActError{Action: action}
	}
	return nil
}

// opAct is an operator's act as a mirror learns of it: the state (ep, v)
// it made, its name, reason and end (store µs; 0 none).
type opAct struct {
	ep, v        uint64
	name, reason string
	until        int64
}

// made returns the act of a manual op's call whose reply is state (ep, v)
// at the store's now (µs): nil for a call that is no act. A hold's end,
// and a disable's with a time to live, is now + ttl, as the script's.
func (x extra) made(ep, v, now int64) *opAct {
	if x.act == "" {
		return nil
	}
	a := &opAct{ep: uint64(ep), v: uint64(v), name: x.act, reason: x.reason}
	if x.act == "hold" || (x.act == "disable" && x.ttl > 0) {
		a.until = now + x.ttl
	}
	return a
}

// bounded is reason cut to MaxActReason bytes at a character's boundary.
func bounded(reason string) string {
	if len(reason) <= MaxActReason {
		return reason
	}
	cut := MaxActReason
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}

// announce takes an act's message ("act ep v name until reason"), which
// comes just before the message of the state the act made, and keeps it
// for that state; false if payload is no act's message.
func (m *ModelBreaker) announce(payload string) bool {
	a, ok := parseAct(payload)
	if !ok {
		return false
	}
	if a != nil {
		m.mu.Lock()
		m.pending = a
		m.mu.Unlock()
	}
	return true
}

// parseAct parses an act's message, as published and as kept in the hash
// field a: false if payload is none; nil if it is malformed (no act to name).
func parseAct(payload string) (*opAct, bool) {
	rest, ok := strings.CutPrefix(payload, "act ")
	if !ok {
		return nil, false
	}
	var f [4]string
	for i := range f {
		f[i], rest, _ = strings.Cut(rest, " ")
	}
	ep, err1 := strconv.ParseUint(f[0], 10, 64)
	v, err2 := strconv.ParseUint(f[1], 10, 64)
	until, err3 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || f[2] == "" {
		return nil, true
	}
	return &opAct{ep: ep, v: v, name: f[2], reason: strings.ToValidUTF8(rest, ""), until: until}, true
}

// madeBy returns a if it is the act that made the state (ep, v), else nil:
// an act found in a reply or a re-read (the store keeps the latest) names
// only the state it made, never a later one another change made since (a
// trip after a disable is no disable).
func madeBy(a *opAct, ep, v uint64) *opAct {
	if a == nil || a.ep != ep || a.v != v {
		return nil
	}
	return a
}

// announced returns the act that made state (ep, v): act if known, else
// the one an act's message announced for it. An announcement for an older
// state is dropped. m.mu must be held.
func (m *ModelBreaker) announced(act *opAct, ep, v uint64) *opAct {
	p := m.pending
	if p != nil && (p.ep != ep || p.v <= v) {
		m.pending = nil
	}
	if act != nil || p == nil || p.ep != ep || p.v != v {
		return act
	}
	return p
}

// stamp names in t, the transition from cur to nm, the operator's act that
// made it (act) or the end of an operator's hold or disable that passed:
// as package fallback does, Manual, Reason and Until (local time).
func (m *ModelBreaker) stamp(t fallback.Transition, cur, nm *modelMirror, act *opAct) fallback.Transition {
	at := func(us int64) time.Time {
		if us <= 0 {
			return time.Time{}
		}
		return m.s.clock.toLocal(us)
	}
	switch {
	case act != nil && act.name != "release": // a release changes no state; the next turn's step is hold_end
		t.Manual, t.Reason, t.Until = act.name, act.reason, at(act.until)
	case cur.st == fallback.Fallback && cur.cause == fallback.CauseManual && nm.st == fallback.Recovering:
		t.Manual, t.Reason, t.Until = "hold_end", cur.hr, at(cur.cen)
	case nm.st == fallback.Fallback && nm.cause == fallback.CauseManual && cur.st != fallback.Fallback:
		// a hold whose act was not announced: an older process's, or one
		// re-read after a missed message
		t.Manual, t.Reason, t.Until = "hold", nm.hr, at(nm.cen)
	case t.From == fallback.Fallback && t.To == fallback.Fallback:
		now := m.storeMicros()
		for i := range m.n {
			if cur.dis[i] && !nm.dis[i] && cur.du[i] > 0 && now >= cur.du[i] {
				t.Manual, t.Reason, t.Until = "disable_end", cur.dr[i], at(cur.du[i])
				break
			}
		}
	}
	return t
}
