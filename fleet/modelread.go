package fleet

import "github.com/loopctl/loopctl-go/fallback"

// view returns the mirror's state as of the estimated store time now (µs)
// with the lazy lease expiry applied (and the re-trip it may cause), on a copy.
func (m *ModelBreaker) view(mr *modelMirror, now int64) modelMirror {
	c := *mr
	m.expireDisables(&c, now)
	tu := m.tuned()
	if c.st == fallback.Recovering && c.pr && now-c.pst >= tu.lease {
		end := c.pst + tu.lease
		c.pr, c.pst, c.s = false, 0, 0
		c.f++
		c.lf = max(c.lf, end)
		if c.f >= tu.set.TripThreshold {
			tu.opening(&c, end, true)
			d, cause := tu.cooldown(c.trips)
			c.cen, c.cause = end+d, cause
			if c.sh > c.cen {
				c.cen, c.cause = c.sh, fallback.CauseHint
			}
			c.st, c.f, c.ta, c.act, c.sh, c.lf = fallback.Fallback, 0, end, true, 0, 0
		}
	}
	return c
}

// usable is fallback.Attempts.Usable from the mirror: whether begin for a
// turn (probed, slow(i): model i failed it slowly) would now route to a
// model that is not slow. While the store is down: whether a chain entry
// other than the slow ones is usable.
func (m *ModelBreaker) usable(probed bool, slow func(int) bool) bool {
	mr := m.mirror.Load()
	now := m.storeMicros()
	c := m.view(mr, now)
	alt := -1
	for i := range m.n {
		if !c.dis[i] && c.att[i] < m.tuned().set.MaxFailCount && !slow(i+1) {
			alt = i
			break
		}
	}
	if mr.mode != Shared {
		return alt >= 0
	}
	st := c.st
	if st == fallback.Fallback && now >= c.cen {
		st = fallback.Recovering // the begin's cooldown step; no probe in flight then
		c.pr = false
	}
	switch {
	case st == fallback.Primary, st == fallback.Recovering && !c.pr && !probed:
		return !slow(0) || alt >= 0
	case m.n == 0:
		return !probed && !slow(0) && !c.held(now)
	case c.route < 0:
		return false
	}
	return !slow(c.route+1) || alt >= 0
}

func (m *ModelBreaker) storeMicros() int64 { return m.s.clock.storeNow() / 1000 }

// State returns the state from the mirror (no round trip), as
// [fallback.Manager.State] reports it. While the store is down it is the
// local manager's (Local), Primary (FailOpen) or Fallback (FailClosed).
func (m *ModelBreaker) State() fallback.State {
	mr := m.mirror.Load()
	switch mr.mode {
	case LocalMode:
		return mr.local.State()
	case FailOpenMode:
		return fallback.Primary
	case FailClosedMode:
		return fallback.Fallback
	}
	return m.view(mr, m.storeMicros()).st
}

// ActiveModel returns where the next Begin would route now ("" if it would
// return ErrExhausted), from the mirror.
func (m *ModelBreaker) ActiveModel() string {
	mr := m.mirror.Load()
	switch mr.mode {
	case LocalMode:
		return mr.local.ActiveModel()
	case FailOpenMode:
		return m.set.Primary
	case FailClosedMode:
		return ""
	}
	now := m.storeMicros()
	c := m.view(mr, now)
	switch c.st {
	case fallback.Primary:
		return m.set.Primary
	case fallback.Fallback:
		if now >= c.cen {
			return m.set.Primary
		}
	case fallback.Recovering:
		if !c.pr {
			return m.set.Primary
		}
	}
	switch c.route {
	case -1:
		if c.held(now) {
			return "" // held with no chain: refused
		}
		return m.set.Primary
	case -2:
		return ""
	}
	return m.set.Chain[c.route]
}

// FallbackActivated reports the sticky "ever tripped" flag, from the mirror.
func (m *ModelBreaker) FallbackActivated() bool {
	mr := m.mirror.Load()
	if mr.mode == LocalMode {
		return mr.local.FallbackActivated()
	}
	return mr.act
}

// ModelSnapshot is a view of a [ModelBreaker]'s mirror.
type ModelSnapshot struct {
	// Snapshot is as [fallback.Manager.Snapshot] reports it, times converted
	// to the local clock.
	fallback.Snapshot
	// Mode is where the state lives: Shared, or the store-down mode.
	Mode Mode
	// Epoch and Generation are the store's incarnation and generation.
	Epoch, Generation uint64
}

// Snapshot returns the mirror's view, with no round trip.
func (m *ModelBreaker) Snapshot() ModelSnapshot {
	mr := m.mirror.Load()
	s := ModelSnapshot{Mode: mr.mode, Epoch: mr.ep, Generation: mr.g}
	if mr.mode == LocalMode {
		s.Snapshot = mr.local.Snapshot()
		return s
	}
	c := m.view(mr, m.storeMicros())
	s.State, s.ConsecutiveFailures, s.ProbeSuccesses, s.FallbackActivated = c.st, c.f, c.s, c.act
	if c.ta >= 0 {
		s.TrippedAt = m.s.clock.toLocal(c.ta)
		s.CooldownEnds, s.CooldownCause = m.s.clock.toLocal(c.cen), c.cause
	}
	if c.pr {
		s.ProbeStartedAt = m.s.clock.toLocal(c.pst)
	}
	now := m.storeMicros()
	s.Trips = m.tuned().viewTrips(&c, now)
	if c.held(now) {
		s.HoldUntil, s.HoldReason = m.s.clock.toLocal(c.cen), c.hr
	}
	s.Chain = make([]fallback.Entry, m.n)
	for i := range m.n {
		s.Chain[i] = fallback.Entry{Model: m.set.Chain[i], Attempts: c.att[i], Available: !c.dis[i],
			Failed: c.dis[i] || c.att[i] >= m.tuned().set.MaxFailCount}
		if c.dis[i] {
			s.Chain[i].DisabledReason = c.dr[i]
			if c.du[i] > 0 {
				s.Chain[i].DisabledUntil = m.s.clock.toLocal(c.du[i])
			}
		}
	}
	return s
}
