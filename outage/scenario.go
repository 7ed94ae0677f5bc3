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
	// Outage is how long the service is down (positive), from Warmup on.
	Outage time.Duration
	// Up and Relapse make the service flap: after the first outage it is up for Up,
	// then down again for Relapse. Zero Relapse: no second outage (Up must then be
	// zero too); with a Relapse, Up must be positive. The fix is the end of the last
	// outage: Warmup+Outage, or Warmup+Outage+Up+Relapse.
	Up      time.Duration
	Relapse time.Duration
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
	// RetryMax is the ladder's MaxDelay (positive, at least RetryBase).
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

// ShortOutage returns [DefaultScenario] with a 30-second outage: shorter than the
// timeout, so every call into it is still hanging at the fix.
func ShortOutage() Scenario {
	s := DefaultScenario()
	s.Outage = 30 * time.Second
	return s
}

// Flapping returns [DefaultScenario] with a service that flaps: down for 3 minutes
// (longer than the timeout, so the breaker trips during the outage), up for 20
// seconds (less than the breaker's 30s cooldown), down again for 2 minutes.
func Flapping() Scenario {
	s := DefaultScenario()
	s.Outage, s.Up, s.Relapse = 3*time.Minute, 20*time.Second, 2*time.Minute
	return s
}

// Named scenarios, for [ScenarioNamed].
var named = []struct {
	name string
	s    func() Scenario
}{
	{"default", DefaultScenario},
	{"short", ShortOutage},
	{"flapping", Flapping},
}

// ScenarioNames returns the names [ScenarioNamed] knows, in order: "default"
// ([DefaultScenario]), "short" ([ShortOutage]) and "flapping" ([Flapping]).
func ScenarioNames() []string {
	names := make([]string, len(named))
	for i, n := range named {
		names[i] = n.name
	}
	return names
}

// ScenarioNamed returns the scenario called name (see [ScenarioNames]) and true, or
// the zero Scenario and false.
func ScenarioNamed(name string) (Scenario, bool) {
	for _, n := range named {
		if n.name == name {
			return n.s(), true
		}
	}
	return Scenario{}, false
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
	if err := s.validateRanges(); err != nil {
		return err
	}
	if err := s.validateRelations(); err != nil {
		return err
	}
	return s.validateSize()
}

// intRange returns a [*FieldError] for field if v is outside [lo, hi], or nil.
func intRange(field string, v, lo, hi int) error {
	if v < lo {
		return &FieldError{field, fmt.Sprintf("must be at least %d (got %d)", lo, v)}
	}
	if v > hi {
		return &FieldError{field, fmt.Sprintf("must be at most %d (got %d)", hi, v)}
	}
	return nil
}

// durRange returns a [*FieldError] for field if v is negative, zero (unless
// zeroOK) or above maxDuration, or nil.
func durRange(field string, v time.Duration, zeroOK bool) error {
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

// validateRanges checks each field on its own, in declaration order, and
// returns the first out of range.
func (s Scenario) validateRanges() error {
	return firstError(
		intRange("Callers", s.Callers, 1, maxCallers),
		durRange("Interval", s.Interval, false),
		durRange("Warmup", s.Warmup, true),
		durRange("Outage", s.Outage, false),
		durRange("Up", s.Up, true),
		durRange("Relapse", s.Relapse, true),
		durRange("Tail", s.Tail, true),
		durRange("Timeout", s.Timeout, false),
		durRange("Latency", s.Latency, true),
		intRange("FailureThreshold", s.FailureThreshold, 1, 1_000_000),
		durRange("Cooldown", s.Cooldown, false),
		durRange("ProbeTimeout", s.ProbeTimeout, false),
		intRange("Retries", s.Retries, 0, maxRetries),
		durRange("RetryBase", s.RetryBase, false),
		durRange("RetryMax", s.RetryMax, false),
		durRange("Bucket", s.Bucket, false),
	)
}

// firstError returns the first of errs that is not nil, or nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// validateRelations checks the fields against each other (Up with Relapse,
// RetryBase with RetryMax, Latency with Timeout) and against what the ladder
// and the breaker accept.
func (s Scenario) validateRelations() error {
	switch {
	case s.Relapse == 0 && s.Up != 0:
		return &FieldError{"Up", fmt.Sprintf("needs a Relapse (got %v without one)", s.Up)}
	case s.Relapse != 0 && s.Up == 0:
		return &FieldError{"Up", fmt.Sprintf("must be positive with a Relapse (got 0s, Relapse %v)", s.Relapse)}
	case s.RetryBase > s.RetryMax:
		return &FieldError{"RetryBase", fmt.Sprintf("must not exceed RetryMax %v (got %v)", s.RetryMax, s.RetryBase)}
	}
	// Whatever the ladder or the breaker reject is rejected here too; the checks
	// above cover every case they know today, so these are a guard for new ones.
	if err := newLadder(s).Validate(); err != nil {
		return &FieldError{"RetryBase", err.Error()}
	}
	if err := s.breakerSettings(nil).Validate(); err != nil {
		return &FieldError{"FailureThreshold", err.Error()}
	}
	if s.Latency >= s.Timeout {
		return &FieldError{"Latency", fmt.Sprintf("must be below Timeout %v (got %v)", s.Timeout, s.Latency)}
	}
	return nil
}

// validateSize checks that the run stays small: at most maxScheduled calls
// and maxBuckets buckets over the horizon.
func (s Scenario) validateSize() error {
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
func (s Scenario) horizon() time.Duration { return s.fix() + s.Tail }

// window is a stretch of time [from, to) during which the service is down.
type window struct{ from, to time.Duration }

// outages returns the outage windows in order.
func (s Scenario) outages() []window {
	w := []window{{s.Warmup, s.Warmup + s.Outage}}
	if s.Relapse > 0 {
		from := s.Warmup + s.Outage + s.Up
		w = append(w, window{from, from + s.Relapse})
	}
	return w
}

// outageStart is when the first outage starts; fix is when the last one ends.
func (s Scenario) outageStart() time.Duration { return s.Warmup }
func (s Scenario) fix() time.Duration         { return s.Warmup + s.Outage + s.Up + s.Relapse }

// down reports whether the service is down at t.
func (s Scenario) down(t time.Duration) bool {
	for _, w := range s.outages() {
		if t >= w.from && t < w.to {
			return true
		}
	}
	return false
}

// String names the scenario in one line.
func (s Scenario) String() string { return s.load() + "; " + s.settings() }

// load describes the callers and the outage.
func (s Scenario) load() string {
	down := fmt.Sprintf("service down from %v to %v (%v outage)", s.outageStart(), s.Warmup+s.Outage, s.Outage)
	if s.Relapse > 0 {
		w := s.outages()[1]
		down += fmt.Sprintf(", up %v, down again from %v to %v (%v)", s.Up, w.from, w.to, s.Relapse)
	}
	return fmt.Sprintf("%d callers calling every %v; %s; timeout %v", s.Callers, s.Interval, down, s.Timeout)
}

// settings describes the breaker, the ladder and the seed.
func (s Scenario) settings() string {
	return fmt.Sprintf("breaker %d failures, %v cooldown, %v lease; %d retries (%v base, %v max); seed %d",
		s.FailureThreshold, s.Cooldown, s.ProbeTimeout, s.Retries, s.RetryBase, s.RetryMax, s.Seed)
}
