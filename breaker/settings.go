package breaker

import (
	"strconv"
	"time"
)

// Default values used when a [Settings] field is zero.
const (
	DefaultFailureThreshold = 3
	DefaultRecoveryDuration = 30 * time.Second
	DefaultProbeTimeout     = 30 * time.Second
	DefaultQuotaCooldown    = 10 * time.Minute
	// DefaultMaxRecoveryFactor is MaxRecoveryTimeout's default, as a
	// multiple of RecoveryDuration.
	DefaultMaxRecoveryFactor = 10
)

// Settings configures a [Breaker]. The zero value is usable: every zero field
// means its documented default.
type Settings struct {
	// Name names the breaker (the tool) in errors and events. Zero: "".
	Name string
	// FailureThreshold is the number of consecutive failures that trips a
	// closed breaker. Zero: 3. Negative: an error.
	FailureThreshold int
	// RecoveryDuration is the cooldown: how long after the last failure an
	// open breaker waits before it grants a probe. Zero: 30s. Negative: an error.
	RecoveryDuration time.Duration
	// ProbeTimeout is the probe's lease: a probe that has not reported after
	// this long counts as failed at the lease's end ([Permit.Deadline]; [Do]
	// bounds the probe's call by it). Zero: 30s. Negative: an error.
	ProbeTimeout time.Duration
	// Now is the clock. Zero (nil): time.Now, read through its monotonic
	// reading. Now must not call into the breaker.
	Now func() time.Time
	// OnStateChange, if not nil, is called after every state change, outside
	// every lock, in the order of the changes; with one caller at a time it has
	// returned before the call that caused the change returns. It may call back
	// into the breaker. Zero (nil): no callbacks, and no bookkeeping for them.
	OnStateChange func(name string, from, to State)
	// Backend, if not nil, keeps the breaker's state outside the process,
	// shared with every process that uses the same backend and name (see
	// [Backend]; package fleet provides one on Redis). Zero (nil): the state
	// lives in this Breaker. With a Backend the rate window (FailureRate and
	// the slow-call rule) is kept by this Breaker, per process, and a trip it
	// causes is written through the Backend ([OutcomeTrip]; SEMANTICS §8.1).
	Backend Backend

	// FailureRate (SEMANTICS §8.1) turns the failure-rate window on:
	// in Closed, after a failure, the breaker trips when the window holds at
	// least RateMinCalls verdicts and failures/verdicts ≥ FailureRate, exactly
	// as on FailureThreshold (whichever fires first). 0 < FailureRate ≤ 1.
	// Zero: off. Negative, above 1 or NaN: an error.
	FailureRate float64
	// RateWindow is the span of the window (ten buckets of RateWindow/10,
	// rolled lazily). Zero: 30s. Negative: an error.
	RateWindow time.Duration
	// RateMinCalls is the number of verdicts the window must hold before the
	// rate rules may trip. Zero: 20. Negative: an error.
	RateMinCalls int
	// SlowCallAfter (§8.2) is the time to first content above which a
	// successful call is a slow success ([Permit.SuccessAfter]). With
	// SlowCallRate, it turns the slow-call rule on. Zero: off. Negative: an
	// error.
	SlowCallAfter time.Duration
	// SlowCallRate (§8.2): in Closed, after a slow success, the breaker trips
	// when the window holds at least RateMinCalls verdicts and slow
	// successes/verdicts ≥ SlowCallRate. 0 < SlowCallRate ≤ 1. Zero: off.
	// Negative, above 1 or NaN: an error.
	SlowCallRate float64

	// RecoveryBackoff (SEMANTICS §9.1) makes repeated trips back off: the
	// opening that makes the trip count n ([Snapshot.Trips]) waits
	// min(RecoveryDuration × RecoveryBackoff^(n−1), MaxRecoveryTimeout)
	// instead of RecoveryDuration, so a tool that re-trips each time it
	// recovers is probed ever less often. A finite factor ≥ 1; 0 or 1: off
	// (n is still counted and reported). NaN, ±Inf, negative values and
	// values in (0, 1): an error.
	RecoveryBackoff float64
	// MaxRecoveryTimeout caps the backed-off cooldown, and is the reset
	// window: a trip that comes at least this long after the breaker last
	// closed starts again from n = 1. Zero: 10 × RecoveryDuration. Below
	// RecoveryDuration: an error.
	MaxRecoveryTimeout time.Duration
	// QuotaCooldown is how long [Permit.QuotaExhausted] keeps the breaker
	// open when the provider gave no hint. Zero: 10 min. Negative: an error.
	QuotaCooldown time.Duration
}

// Validate reports the first bad field of s as a [*SettingsError]: a
// negative one, a rate outside [0, 1], a RecoveryBackoff that is not 0 or a
// finite factor ≥ 1, or a MaxRecoveryTimeout below RecoveryDuration.
func (s Settings) Validate() error {
	switch {
	case s.FailureThreshold < 0:
		return &SettingsError{Field: "FailureThreshold", Value: strconv.Itoa(s.FailureThreshold)}
	case s.RecoveryDuration < 0:
		return &SettingsError{Field: "RecoveryDuration", Value: s.RecoveryDuration.String()}
	case s.ProbeTimeout < 0:
		return &SettingsError{Field: "ProbeTimeout", Value: s.ProbeTimeout.String()}
	}
	if err := s.validateRate(); err != nil {
		return err
	}
	return s.validateBackoff()
}
