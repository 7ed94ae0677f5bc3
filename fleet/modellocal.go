package fleet

import (
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// A shared model breaker while the store is down: the store-down modes and
// the local manager seeded from the mirror (docs/FLEET.md §1.6).

// down switches to the store-down mode md; for LocalMode it seeds a local
// fallback.Manager from the mirror: the same state and trip time (chain
// budgets start afresh).
func (m *ModelBreaker) down(md Mode) {
	m.mu.Lock()
	cur := m.mirror.Load()
	if nm := inMode(cur, md, m.seed); nm != nil {
		m.publish(nm, cur)
		return
	}
	m.mu.Unlock()
}

// up goes back to the shared state.
func (m *ModelBreaker) up() { m.down(Shared) }

// seed builds the local manager: tripped at the mirror's trip time when the
// mirror is in Fallback or Recovering, with the manual disables.
func (m *ModelBreaker) seed(mr *modelMirror) *fallback.Manager {
	var seedAt atomic.Pointer[time.Time]
	if mr.st != fallback.Primary && mr.ta >= 0 {
		t := m.s.clock.toLocal(mr.ta)
		seedAt.Store(&t)
	}
	ls := m.tuned().set
	if m.onChange != nil {
		ls.OnTransition = func(t fallback.Transition) {
			if seedAt.Load() == nil { // the seeding trip is not news
				m.onChange(t)
			}
		}
	}
	ls.Now = func() time.Time {
		if t := seedAt.Load(); t != nil {
			return *t
		}
		return time.Now()
	}
	lm, err := fallback.New(ls)
	if err != nil {
		return nil // cannot happen: Model validated the settings
	}
	for i, d := range mr.dis {
		if d {
			var until time.Time
			if mr.du[i] > 0 {
				until = m.s.clock.toLocal(mr.du[i])
			}
			_ = lm.Disable(m.set.Chain[i], until, mr.dr[i])
		}
	}
	if n := m.tuned().viewTrips(mr, m.storeMicros()); mr.st == fallback.Primary && n > 0 {
		m.seedTrips(lm, &seedAt, n, m.s.clock.toLocal(mr.closedAt))
		seedAt.Store(nil)
	}
	if tripped := seedAt.Load(); tripped != nil {
		m.seedTrips(lm, &seedAt, mr.trips-1, *tripped)
		seedAt.Store(tripped)
		var hint time.Time // the shared cooldown's end holds the local one too
		if mr.cen > 0 {
			hint = m.s.clock.toLocal(mr.cen)
		}
		for range ls.TripThreshold {
			t, err := lm.Begin()
			if err != nil {
				break
			}
			t.Fail(fallback.Failure{Hint: hint})
		}
		if mr.st == fallback.Fallback && mr.cause == fallback.CauseManual {
			lm.Hold(hint, mr.hr) // the fleet's hold holds the local manager until the same end
		}
		seedAt.Store(nil)
	}
	return lm
}
