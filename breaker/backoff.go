package breaker

import (
	"math"
	"strconv"
)

// Cause says why an open breaker's cooldown ends when it does
// ([Snapshot.Cause]).
type Cause int

// The causes of a cooldown's end.
const (
	// CauseRecoveryTimeout: the cooldown is RecoveryDuration from the last
	// failure.
	CauseRecoveryTimeout Cause = iota
	// CauseBackoff: the cooldown has grown with repeated trips (n > 1 with
	// RecoveryBackoff on, SEMANTICS §9.1).
	CauseBackoff
	// CauseHint: a provider's hint ([Permit.RateLimited]) ends it, later
	// than the cooldown would.
	CauseHint
	// CauseQuota: an exhausted quota ([Permit.QuotaExhausted]) ends it, at
	// its hint or after QuotaCooldown.
	CauseQuota
	// CauseManual: an operator's hold. A Breaker has no hold of its own and
	// never reports it; a caller that holds a breaker's tool out by hand (a
	// disabled pool member) reports it beside the breaker's snapshot.
	CauseManual
)

// String returns "recovery_timeout", "backoff", "hint", "quota" or "manual".
func (c Cause) String() string {
	if c >= 0 && int(c) < len(causeTexts) {
		return causeTexts[c]
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// noUntil marks a cooldown end that is not set (a hint's, or the base
// cooldown's of an opening caused by a hint alone).
const noUntil = math.MinInt64

// backoff is the numbers of §9.1 a Breaker keeps, in nanoseconds.
type backoff struct {
	factor float64 // ≥ 1; 1: off
	max    int64   // the cap and the reset window
	quota  int64   // QuotaCooldown
}

// newBackoff returns the §9.1 numbers of s (validated) with base cooldown
// base (ns).
func newBackoff(s Settings, base int64) backoff {
	k := backoff{factor: s.RecoveryBackoff, max: int64(s.MaxRecoveryTimeout),
		quota: int64(s.QuotaCooldown)}
	if k.factor < 1 {
		k.factor = 1
	}
	if k.max == 0 {
		k.max = satMul(base, DefaultMaxRecoveryFactor)
	}
	if k.quota == 0 {
		k.quota = int64(DefaultQuotaCooldown)
	}
	return k
}

// cooldown returns c(n) = min(base × factor^(n−1), max) for base cooldown
// base (ns): base for n ≤ 1 or with the factor off, and saturating at max
// for any n, without overflow (the float power saturates to +Inf).
func (k backoff) cooldown(base int64, n int) int64 {
	if n <= 1 || k.factor == 1 {
		return base // MaxRecoveryTimeout is never below the base
	}
	c := float64(base) * math.Pow(k.factor, float64(n-1))
	if c >= float64(k.max) {
		return k.max
	}
	return int64(c)
}

// validateBackoff reports the first bad field of the §9.1 settings.
func (s Settings) validateBackoff() error {
	f := s.RecoveryBackoff
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 0 && f < 1 {
		return &SettingsError{Field: "RecoveryBackoff", Value: strconv.FormatFloat(f, 'g', -1, 64),
			Rule: "must be 0 (off) or a finite factor ≥ 1"}
	}
	base := s.RecoveryDuration
	if base == 0 {
		base = DefaultRecoveryDuration
	}
	switch {
	case s.MaxRecoveryTimeout < 0:
		return &SettingsError{Field: "MaxRecoveryTimeout", Value: s.MaxRecoveryTimeout.String()}
	case s.MaxRecoveryTimeout != 0 && s.MaxRecoveryTimeout < base:
		return &SettingsError{Field: "MaxRecoveryTimeout", Value: s.MaxRecoveryTimeout.String(),
			Rule: "must not be below RecoveryDuration (" + base.String() + ")"}
	case s.QuotaCooldown < 0:
		return &SettingsError{Field: "QuotaCooldown", Value: s.QuotaCooldown.String()}
	}
	return nil
}

// satMul returns a×n for a ≥ 0 and n > 0, saturating instead of overflowing.
func satMul(a, n int64) int64 {
	if a > math.MaxInt64/n {
		return math.MaxInt64
	}
	return a * n
}

// trip moves the breaker to Open from Closed or HalfOpen after a fresh
// failure (b.lastFailure set), at clock offset now: the trip count n rises
// (first reset to 0 when the breaker had been closed for at least
// MaxRecoveryTimeout) and the cooldown is c(n) from the last failure; a hint
// of an earlier opening no longer applies. b.mu must be held.
func (b *Breaker) trip(now int64) {
	b.resetTrips(now)
	if b.trips < math.MaxInt32 {
		b.trips++
	}
	b.baseUntil = satAdd(b.lastFailure, b.cooldown())
	b.hintUntil = noUntil
	b.probeStart = 0
	b.setMode(mOpen)
}

// resetTrips applies the lazy reset of n at an opening from Closed at now:
// n = 0 once the breaker has been closed for MaxRecoveryTimeout. A re-trip
// from HalfOpen keeps n (the breaker has not closed since). b.mu must be held.
func (b *Breaker) resetTrips(now int64) {
	if b.mode == mClosed && now-b.closedAt >= b.back.max {
		b.trips = 0
	}
}

// cooldown returns c(n) for the n in force (n = 0, after an opening by a
// hint alone, waits the base). b.mu must be held.
func (b *Breaker) cooldown() int64 { return b.back.cooldown(b.recovery, b.trips) }

// openUntil returns when an open breaker may grant a probe: the later of the
// base cooldown's end and a hint's. b.mu must be held.
func (b *Breaker) openUntil() int64 { return max(b.baseUntil, b.hintUntil) }

// restart applies a fresh failure that arrives while Open: the last failure
// has moved (never back), and the cooldown c(n) restarts from it unless a
// later end is in force. b.mu must be held.
func (b *Breaker) restart() {
	b.baseUntil = max(b.baseUntil, satAdd(b.lastFailure, b.cooldown()))
}

// causeOf says why an open view's cooldown ends when it does.
func (b *Breaker) causeOf(v view) Cause {
	switch {
	case v.hintUntil > v.baseUntil:
		return v.hintCause
	case v.trips > 1 && b.back.factor > 1:
		return CauseBackoff
	}
	return CauseRecoveryTimeout
}
