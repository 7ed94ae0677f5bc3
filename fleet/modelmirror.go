package fleet

import (
	"context"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// The mirror of a shared model breaker: script replies and change messages
// applied to it, newest state wins, and the transitions they make.

// apply stores a state into the mirror if newer (see ToolBreaker.apply),
// with the disables' ends du (nil: none), the trip count and closedAt k
// (nil: an older process's message: kept) and the reasons a change
// message or a re-read carries (notes: "item reason" each); act is the
// operator's act that made the state or the latest act a reply or a
// re-read found (nil: none known, or the one a change message announced),
// named only if it made this state (madeBy). The reasons
// are set before the transition is made, so that it names them (stamp).
func (m *ModelBreaker) apply(x, du, k []int64, since *modelMirror, act *opAct, notes ...string) {
	m.mu.Lock()
	cur := m.mirror.Load()
	ep, v := uint64(x[0]), uint64(x[1])
	act = madeBy(m.announced(act, ep, v), ep, v)
	if (since == nil || since != cur) && ep == cur.ep && v <= cur.v {
		nm := *cur // an older state may still carry a reason newer than the mirror's
		changed := false
		for _, note := range notes {
			changed = m.setReason(&nm, note, reasonAt{ep, v}) || changed
		}
		if changed {
			m.publish(&nm, cur)
			return
		}
		m.mu.Unlock()
		return
	}
	nm := *cur
	nm.ep, nm.v, nm.st, nm.g, nm.ce = ep, v, fallback.State(x[2]), uint64(x[3]), uint64(x[4])
	nm.f, nm.s, nm.ta, nm.act, nm.pr, nm.pst, nm.pq = int(x[5]), int(x[6]), x[7], x[8] != 0, x[9] != 0, x[10], uint64(x[11])
	nm.att, nm.dis = make([]int, m.n), make([]bool, m.n)
	for i := range m.n {
		nm.att[i], nm.dis[i] = int(x[12+i]), x[12+m.n+i] != 0
	}
	w := 14 + 2*m.n
	nm.cen, nm.cause, nm.sh, nm.lf = x[w], fallback.Cause(x[w+1]), x[w+2], x[w+3]
	nm.du, nm.dexp = make([]int64, m.n), 0
	for i := range du {
		if nm.du[i] = du[i]; nm.dis[i] && nm.du[i] > 0 && (nm.dexp == 0 || nm.du[i] < nm.dexp) {
			nm.dexp = nm.du[i]
		}
	}
	nm.route = m.routeOf(&nm, nm.att, nm.dis)
	if len(k) == 2 {
		nm.trips, nm.closedAt = int(k[0]), k[1]
	}
	for _, note := range notes {
		m.setReason(&nm, note, reasonAt{ep, v})
	}
	m.publishAs(&nm, cur, act)
}

// publish stores nm, queues the transition it makes, releases m.mu and
// delivers callbacks. m.mu must be held.
func (m *ModelBreaker) publish(nm, cur *modelMirror) { m.publishAs(nm, cur, nil) }

// publishAs is publish for a state that act, an operator's act (nil:
// none), made: the transition names it (see stamp).
func (m *ModelBreaker) publishAs(nm, cur *modelMirror, act *opAct) {
	m.mirror.Store(nm)
	if m.onChange != nil && nm.mode == Shared && cur.mode == Shared {
		fromModel, toModel := m.stateModel(cur), m.stateModel(nm)
		if cur.st != nm.st || (nm.st == fallback.Fallback && fromModel != toModel) {
			at := time.Now()
			if nm.st == fallback.Fallback && cur.st != fallback.Fallback && nm.ta >= 0 {
				at = m.s.clock.toLocal(nm.ta)
			}
			t := fallback.Transition{From: cur.st, To: nm.st, FromModel: fromModel, ToModel: toModel, At: at}
			m.events.Push(m.stamp(t, cur, nm, act))
		}
	}
	m.mu.Unlock()
	if m.onChange != nil {
		m.events.Drain(m.onChange)
	}
}

// stateModel is the model a mirror's state routes to, as Transitions name it.
func (m *ModelBreaker) stateModel(mr *modelMirror) string {
	if mr.st != fallback.Fallback {
		return m.set.Primary
	}
	switch {
	case mr.route == -1 && mr.cause == fallback.CauseManual:
		return "" // held with no chain: routed nowhere, as fallback names it
	case mr.route == -1:
		return m.set.Primary
	case mr.route == -2:
		return ""
	}
	return m.set.Chain[mr.route]
}

// onMessage applies a change notification: the state, space-separated,
// then optionally lines with the disables' ends, the note, and the trip
// count with closedAt (see modelLua).
func (m *ModelBreaker) onMessage(payload string) {
	if m.announce(payload) {
		return // an operator's act, the state message follows
	}
	payload, rest, _ := strings.Cut(payload, "\n")
	d, note, _ := strings.Cut(rest, "\n")
	x := make([]int64, m.width())
	if !parseInts(payload, x) {
		return
	}
	var du []int64
	if d != "" {
		if du = make([]int64, m.n); !parseInts(d, du) {
			return
		}
	}
	// The last line is the trip count and closedAt (a reason may hold a
	// newline; those two never do); a message without it keeps them.
	var k []int64
	if i := strings.LastIndexByte(note, '\n'); i >= 0 {
		if k = make([]int64, 2); parseInts(note[i+1:], k) {
			note = note[:i]
		} else {
			k = nil
		}
	}
	if note == "" {
		m.apply(x, du, k, nil, nil)
		return
	}
	m.apply(x, du, k, nil, nil, note)
}

// sync re-reads the store's state (the store wins), with the act that made
// it (the script's reply names it; modelLua) and the reasons of the hold
// and the disables, and applies them together: the transition a re-read
// makes (at start, after a reconnect: the messages were missed) names the
// operator's act, its reason and its end as the messages would have
// (modelact.go), never a hold with no reason. The reasons are read just
// after the state, so they are at least as new as it.
func (m *ModelBreaker) sync(ctx context.Context) error {
	before := m.mirror.Load()
	v, act, err := m.eval(ctx, "sync", Turn{entry: -1}, 0, 0, true, extra{}, before)
	if err != nil {
		return err
	}
	notes, err := m.readNotes(ctx)
	if err != nil {
		return err
	}
	width := m.width()
	x := v[:width]
	m.apply(x, v[width+4:width+4+m.n], v[width+4+m.n:], before, act, notes...)
	return nil
}
