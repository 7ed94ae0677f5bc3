package fleet

import "github.com/loopctl/loopctl-go/fallback"

// view returns the mirror's state as of the estimated store time now (µs)
// with the lazy lease expiry applied (and the re-trip it may cause), on a copy.
func (m *ModelBreaker) view(mr *modelMirror, now int64) modelMirror {
	c := *mr
	if c.st == fallback.Recovering && c.pr && now-c.pst >= m.lease {
		end := c.pst + m.lease
		c.pr, c.pst, c.s = false, 0, 0
		c.f++
		if c.f >= m.set.TripThreshold {
			c.st, c.f, c.ta, c.act = fallback.Fallback, 0, end, true
		}
	}
	return c
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
		if now-c.ta >= m.rec {
			return m.set.Primary
		}
	case fallback.Recovering:
		if !c.pr {
			return m.set.Primary
		}
	}
	switch c.route {
	case -1:
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
	}
	if c.pr {
		s.ProbeStartedAt = m.s.clock.toLocal(c.pst)
	}
	s.Chain = make([]fallback.Entry, m.n)
	for i := range m.n {
		s.Chain[i] = fallback.Entry{Model: m.set.Chain[i], Attempts: c.att[i], Available: !c.dis[i],
			Failed: c.dis[i] || c.att[i] >= m.set.MaxFailCount}
	}
	return s
}
