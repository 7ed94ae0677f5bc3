package fallback

import (
	"cmp"
	"math"
	"time"
)

// Repeated trips back off (SEMANTICS §9.1): the trip count n rises on every
// opening that a failing primary caused, and the opening that makes n = k
// waits c(k) = min(base × f^(k−1), MaxRecoveryTimeout) instead of the base
// cooldown. A brownout that re-trips each time the breaker closes then costs
// one trip's worth of turns per growing cooldown, not per base cooldown.

// validateBackoff checks RecoveryBackoff and MaxRecoveryTimeout.
func (s Settings) validateBackoff(bad func(field, problem string)) {
	switch f := s.RecoveryBackoff; {
	case math.IsNaN(f) || math.IsInf(f, 0):
		bad("RecoveryBackoff", "must be a finite number (got "+fmtFloat(f)+")")
	case f < 0:
		bad("RecoveryBackoff", "must not be negative (got "+fmtFloat(f)+")")
	case f > 0 && f < 1:
		bad("RecoveryBackoff", "must be at least 1, or 0 for off (got "+fmtFloat(f)+"): a factor below 1 would shorten the cooldown of repeated trips")
	}
	if s.MaxRecoveryTimeout < 0 {
		bad("MaxRecoveryTimeout", "must not be negative (got "+s.MaxRecoveryTimeout.String()+")")
		return
	}
	base := cmp.Or(s.RecoveryTimeout, DefaultRecoveryTimeout)
	if s.MaxRecoveryTimeout > 0 && s.MaxRecoveryTimeout < base && s.RecoveryTimeout >= 0 {
		bad("MaxRecoveryTimeout", "must not be below RecoveryTimeout (got "+s.MaxRecoveryTimeout.String()+
			", RecoveryTimeout "+base.String()+")")
	}
}

// maxRecovery is MaxRecoveryTimeout with its default: 10 × the base
// cooldown, saturating.
func maxRecovery(s Settings) time.Duration {
	if s.MaxRecoveryTimeout > 0 {
		return s.MaxRecoveryTimeout
	}
	base := cmp.Or(s.RecoveryTimeout, DefaultRecoveryTimeout)
	if base > math.MaxInt64/10 {
		return math.MaxInt64
	}
	return 10 * base
}

// cooldownOf returns c(k) = min(base × f^(k−1), limit) for the opening that
// made the trip count k (k ≤ 1: base), saturating at limit for any k
// without overflow. f ≤ 1 is no growth.
func cooldownOf(base time.Duration, f float64, limit time.Duration, k int) time.Duration {
	if k <= 1 || f <= 1 || base >= limit {
		return min(base, limit)
	}
	// base × f^(k−1) ≥ limit exactly when (k−1)·ln f ≥ ln(limit/base); the
	// product is computed in float64 only below the limit, where it fits.
	grown := float64(base) * math.Pow(f, float64(k-1))
	if math.IsInf(grown, 0) || math.IsNaN(grown) || grown >= float64(limit) {
		return limit
	}
	return time.Duration(grown)
}

// tripCooldown is the base cooldown for the trip count in force: c(n).
func (c *machine) tripCooldown() time.Duration {
	return cooldownOf(c.cfg.recoveryTimeout, c.cfg.backoff, c.cfg.maxRecovery, c.trips)
}

// opening updates the trip count for a transition into Fallback at at:
// first, from Primary, the reset (the manager has been closed for
// MaxRecoveryTimeout or longer since it last entered Primary: n = 0), then,
// when the opening was caused by the primary failing (raise), n + 1. A
// re-trip from Recovering keeps n: the manager has not closed since its
// last opening, so a primary that stays down keeps backing off, however
// long it has been open. A quota, a rate-limited probe re-tripping at once
// and a hold open without raising n.
func (c *machine) opening(at time.Time, raise bool) {
	if c.state == Primary && at.Sub(c.closedAt) >= c.cfg.maxRecovery {
		c.trips = 0
	}
	if raise && c.trips < math.MaxInt32 {
		c.trips++
	}
}

// viewTrips is the trip count a pure read reports at now: n, or 0 in
// Primary once MaxRecoveryTimeout has passed since closedAt (the next
// opening would count from 0). In Fallback and Recovering it is the count
// of the opening in force, whose cooldown c(n) is running or has run.
func (c *machine) viewTrips(clk *clock) int {
	if c.state == Primary && clk.since(c.closedAt) >= c.cfg.maxRecovery {
		return 0
	}
	return c.trips
}

// slowProbe applies a probe whose first content came later than
// SlowCallAfter (SEMANTICS §9.2): it re-opens at once, whatever the streak
// of probe successes, and raises n. The slot is already free. The turn was
// served: the caller has its answer, so nothing falls through.
func (c *machine) slowProbe(at time.Time, rec *recorder) {
	c.probeSuccesses = 0
	c.trip(at, Failure{}, true, rec)
}
