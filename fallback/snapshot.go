package fallback

import "time"

// Snapshot is a consistent view of a [Manager] at one instant.
type Snapshot struct {
	// State is as [Manager.State] reports it.
	State State
	// ConsecutiveFailures counts consecutive failed turns on the primary
	// (Primary) or consecutive transient probe failures (Recovering).
	ConsecutiveFailures int
	// ProbeSuccesses counts consecutive probe successes (Recovering).
	ProbeSuccesses int
	// TrippedAt is when the manager last tripped; zero unless tripped.
	TrippedAt time.Time
	// FallbackActivated is the sticky "ever tripped" flag.
	FallbackActivated bool
	// Chain describes every chain entry, in order (a fresh copy).
	Chain []Entry
	// ProbeStartedAt is when the probe in flight was granted; zero if no probe
	// is in flight (or its lease has expired).
	ProbeStartedAt time.Time
	// CooldownEnds is when the cooldown of the latest trip ends: the
	// later of TrippedAt + RecoveryTimeout and the latest hint among the
	// failures that tripped, or for a Quota trip its hint or TrippedAt +
	// QuotaCooldown; zero unless tripped.
	CooldownEnds time.Time
	// CooldownCause says which of those it is (meaningful while CooldownEnds
	// is set). For a hold ([Manager.Hold]) it is CauseManual and
	// CooldownEnds is the hold's end.
	CooldownCause Cause
	// HoldUntil is when the operator's hold in force ends (SEMANTICS §8.5:
	// the same instant as CooldownEnds); zero when no hold is in force.
	HoldUntil time.Time
	// HoldReason is the reason given to the hold in force.
	HoldReason string
	// Trips is the trip count n of SEMANTICS §9.1: the openings in a row
	// that a failing primary caused (a quota, a rate-limited probe's
	// immediate re-trip and a hold do not count). In Fallback and Recovering
	// it is the count of the opening in force, whose cooldown is c(n); in
	// Primary it reads 0 once MaxRecoveryTimeout has passed since the
	// manager last entered Primary. It is kept with RecoveryBackoff off too.
	Trips int
}

// Entry describes one chain entry in a [Snapshot].
type Entry struct {
	// Model is the entry's model.
	Model string
	// Attempts is the number of failed turns it served since the last recovery
	// or Reset.
	Attempts int
	// Available is false if the entry was disabled with SetAvailable.
	Available bool
	// Failed is true if the entry is disabled or Attempts >= MaxFailCount.
	Failed bool
	// DisabledUntil is when a manual disable with an end ([Manager.Disable])
	// ends; zero when the entry is available or disabled until enabled.
	DisabledUntil time.Time
	// DisabledReason is the reason given to the manual disable.
	DisabledReason string
}

// Snapshot returns the manager's state as [Manager.State] sees it, with the
// counters and the chain. It is a pure read: it changes nothing.
func (m *Manager) Snapshot() Snapshot {
	if m.shared != nil {
		return m.shared.Snapshot()
	}
	clk := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.mc
	c.expireLease(&clk, nil)
	c.chain = c.viewChain(&clk)
	s := Snapshot{
		State:               c.state,
		ConsecutiveFailures: c.failures,
		ProbeSuccesses:      c.probeSuccesses,
		TrippedAt:           c.trippedAt,
		FallbackActivated:   c.activated,
		Chain:               make([]Entry, len(c.chain)),
		ProbeStartedAt:      c.probeStart,
		CooldownEnds:        c.cooldownEnd,
		CooldownCause:       c.cause,
		Trips:               c.viewTrips(&clk),
	}
	if c.held() && clk.since(c.cooldownEnd) < 0 {
		s.HoldUntil, s.HoldReason = c.cooldownEnd, c.holdReason
	}
	for i, e := range c.chain {
		s.Chain[i] = Entry{
			Model:          m.cfg.models[i],
			Attempts:       e.attempts,
			Available:      !e.disabled,
			Failed:         e.disabled || e.attempts >= m.cfg.maxFail,
			DisabledUntil:  e.until,
			DisabledReason: e.reason,
		}
	}
	return s
}
