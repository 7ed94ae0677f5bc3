package outage

import (
	"fmt"
	"time"
)

// Scenario describes one outage and the two policies' settings. It has no defaults of
// its own: start from [DefaultScenario] and change fields. [Scenario.Validate] reports
// every value that is out of range.
type Scenario struct {
	// Callers is the number of callers (at least 1). Each has at most one call in flight.
	Callers int
	// Interval is the time between a caller's scheduled calls (positive).
	Interval time.Duration
	// Warmup is the healthy time before the outage starts (zero or more).
	Warmup time.Duration
	// Outage is how long the service is down (positive). The fix is at Warmup+Outage.
	Outage time.Duration
	// Tail is the time after the fix during which calls are still scheduled (zero or
	// more). The run goes on until every call has ended.
	Tail time.Duration
	// Timeout is how long an attempt that reaches the dead service hangs before it
	// fails (positive).
	Timeout time.Duration
	// Latency is how long a healthy attempt takes (zero or more, below Timeout).
	Latency time.Duration

	// FailureThreshold is the breaker's consecutive-failure trip threshold (at least 1).
	FailureThreshold int
	// Cooldown is the breaker's RecoveryDuration (positive).
	Cooldown time.Duration
	// ProbeTimeout is the lease of the breaker's probe (positive).
	ProbeTimeout time.Duration

	// Retries is the number of retries after a transient failure (0 to 100); a call
	// makes at most Retries+1 attempts.
	Retries int
	// RetryBase is the ladder's BaseDelay (positive).
	RetryBase time.Duration
	// RetryMax is the ladder's MaxDelay (positive).
	RetryMax time.Duration

	// Seed seeds the PCG that draws caller phases and backoff jitter.
	Seed uint64
	// Bucket is the width of a time bucket in [Outcome.Buckets] and the chart (positive).
	Bucket time.Duration
}

// DefaultScenario returns the comparison from the source page: a 5-minute outage,
// 2-minute timeouts, 100 callers calling every 10s, 2 minutes of warm-up and of tail,
// the breaker's defaults (3 failures, 30s cooldown, 30s probe lease) and the ladder's
// defaults (3 retries, 100ms base, 10s max), seed 1, 5s buckets.
func DefaultScenario() Scenario {
	return Scenario{
		Callers:          100,
		Interval:         10 * time.Second,
		Warmup:           2 * time.Minute,
		Outage:           5 * time.Minute,
		Tail:             2 * time.Minute,
		Timeout:          2 * time.Minute,
		Latency:          50 * time.Millisecond,
		FailureThreshold: 3,
		Cooldown:         30 * time.Second,
		ProbeTimeout:     30 * time.Second,
		Retries:          3,
		RetryBase:        100 * time.Millisecond,
		RetryMax:         10 * time.Second,
		Seed:             1,
		Bucket:           5 * time.Second,
	}
}

// Limits that keep a run small enough to finish quickly and fit in memory.
const (
	maxCallers   = 100_000
	maxRetries   = 100
	maxDuration  = 30 * 24 * time.Hour // any single duration field
	maxScheduled = 10_000_000          // scheduled calls over the whole run
	maxBuckets   = 20_000              // buckets over the scheduled window
)

// FieldError reports a [Scenario] field whose value is out of range.
type FieldError struct {
	Field  string // the Scenario field, e.g. "Callers"
	Reason string // e.g. "must be at least 1 (got 0)"
}

// Error returns "outage: <Field> <Reason>".
func (e *FieldError) Error() string { return "outage: " + e.Field + " " + e.Reason }

// Validate returns a [*FieldError] for the first field that is out of range, or nil.
func (s Scenario) Validate() error {
	atLeast := func(field string, v, lo, hi int) error {
		if v < lo {
			return &FieldError{field, fmt.Sprintf("must be at least %d (got %d)", lo, v)}
		}
		if v > hi {
			return &FieldError{field, fmt.Sprintf("must be at most %d (got %d)", hi, v)}
		}
		return nil
	}
	dur := func(field string, v time.Duration, zeroOK bool) error {
		switch {
		case v < 0:
			return &FieldError{field, fmt.Sprintf("must not be negative (got %v)", v)}
		case v == 0 && !zeroOK:
			return &FieldError{field, "must be positive (got 0s)"}
		case v > maxDuration:
			return &FieldError{field, fmt.Sprintf("must be at most %v (got %v)", maxDuration, v)}
		}
		return nil
	}
	checks := []error{
		atLeast("Callers", s.Callers, 1, maxCallers),
		dur("Interval", s.Interval, false),
		dur("Warmup", s.Warmup, true),
		dur("Outage", s.Outage, false),
		dur("Tail", s.Tail, true),
		dur("Timeout", s.Timeout, false),
		dur("Latency", s.Latency, true),
		atLeast("FailureThreshold", s.FailureThreshold, 1, 1_000_000),
		dur("Cooldown", s.Cooldown, false),
		dur("ProbeTimeout", s.ProbeTimeout, false),
		atLeast("Retries", s.Retries, 0, maxRetries),
		dur("RetryBase", s.RetryBase, false),
		dur("RetryMax", s.RetryMax, false),
		dur("Bucket", s.Bucket, false),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	if s.Latency >= s.Timeout {
		return &FieldError{"Latency", fmt.Sprintf("must be below Timeout %v (got %v)", s.Timeout, s.Latency)}
	}
	h := s.horizon()
	if n := int64(s.Callers) * (int64(h/s.Interval) + 1); n > maxScheduled {
		return &FieldError{"Interval", fmt.Sprintf("is too short: %d callers every %v schedule %d calls (at most %d)",
			s.Callers, s.Interval, n, maxScheduled)}
	}
	if n := int64(h / s.Bucket); n > maxBuckets {
		return &FieldError{"Bucket", fmt.Sprintf("is too short: %v gives %d buckets (at most %d)", s.Bucket, n, maxBuckets)}
	}
	return nil
}

// horizon is the end of the scheduled window: no call starts at or after it.
func (s Scenario) horizon() time.Duration { return s.Warmup + s.Outage + s.Tail }

// outageStart and fix bound the outage window [outageStart, fix).
func (s Scenario) outageStart() time.Duration { return s.Warmup }
func (s Scenario) fix() time.Duration         { return s.Warmup + s.Outage }

// down reports whether the service is down at t.
func (s Scenario) down(t time.Duration) bool { return t >= s.outageStart() && t < s.fix() }

// String names the scenario in one line.
func (s Scenario) String() string { return s.load() + "; " + s.settings() }

// load describes the callers and the outage.
func (s Scenario) load() string {
	return fmt.Sprintf("%d callers calling every %v; service down from %v to %v (%v outage); timeout %v",
		s.Callers, s.Interval, s.outageStart(), s.fix(), s.Outage, s.Timeout)
}

// settings describes the breaker, the ladder and the seed.
func (s Scenario) settings() string {
	return fmt.Sprintf("breaker %d failures, %v cooldown, %v lease; %d retries (%v base, %v max); seed %d",
		s.FailureThreshold, s.Cooldown, s.ProbeTimeout, s.Retries, s.RetryBase, s.RetryMax, s.Seed)
}
