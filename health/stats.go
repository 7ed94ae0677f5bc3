package health

import (
	"math"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Status is a tool's health as judged from its breaker and its [Stats].
type Status int

// The statuses, from best to worst.
const (
	// Healthy: the breaker is not open and the score is at least 0.8.
	Healthy Status = iota
	// Degraded: the breaker is not open and the score is at least 0.5.
	Degraded
	// Unhealthy: the breaker is open, or the score is below 0.5.
	Unhealthy
)

// Score thresholds of [Status].
const (
	HealthyScore  = 0.8
	DegradedScore = 0.5
)

// EWMA weights: next = EWMAKeep·prev + EWMAWeight·sample.
const (
	EWMAKeep   = 0.7
	EWMAWeight = 0.3
)

// String returns "healthy", "degraded" or "unhealthy".
func (s Status) String() string {
	switch s {
	case Healthy:
		return "healthy"
	case Degraded:
		return "degraded"
	case Unhealthy:
		return "unhealthy"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Stats is a tool's call record. Cancelled calls and refusals are not recorded.
type Stats struct {
	// Calls, Successes and Failures count settled calls (Calls = Successes + Failures).
	Calls, Successes, Failures uint64
	// TotalDuration sums the calls' durations (from the gate to the
	// settlement), failed calls included, saturating at the largest Duration.
	// MaxDuration is the longest one.
	TotalDuration, MaxDuration time.Duration
	// EWMA is the moving average of success (1 for a success, 0 for a
	// failure): 1.0 before any call, then next = 0.7·prev + 0.3·sample.
	EWMA float64
}

// freshStats is the record of a tool with no calls.
var freshStats = Stats{EWMA: 1}

// SuccessRate returns Successes/Calls, or 1.0 with no calls.
func (s Stats) SuccessRate() float64 {
	if s.Calls == 0 {
		return 1
	}
	return float64(s.Successes) / float64(s.Calls)
}

// Score returns 0.3·SuccessRate + 0.7·EWMA, a number in [0, 1].
func (s Stats) Score() float64 { return 0.3*s.SuccessRate() + 0.7*s.EWMA }

// record adds one settled call of duration d (negative counts as 0).
func (s *Stats) record(ok bool, d time.Duration) {
	d = max(d, 0)
	s.Calls++
	sample := 0.0
	if ok {
		s.Successes++
		sample = 1
	} else {
		s.Failures++
	}
	if s.TotalDuration > math.MaxInt64-d {
		s.TotalDuration = math.MaxInt64
	} else {
		s.TotalDuration += d
	}
	s.MaxDuration = max(s.MaxDuration, d)
	s.EWMA = EWMAKeep*s.EWMA + EWMAWeight*sample
}

// statusOf judges a tool from its breaker state and its stats.
func statusOf(st breaker.State, s Stats) Status {
	switch score := s.Score(); {
	case st == breaker.Open:
		return Unhealthy
	case score >= HealthyScore:
		return Healthy
	case score >= DegradedScore:
		return Degraded
	}
	return Unhealthy
}

// ToolHealth is one line of [Registry.Summary].
type ToolHealth struct {
	// Tool is the tool's name.
	Tool string
	// State is the breaker's state (pure: an expired probe lease reads Open).
	State breaker.State
	// Status is judged from State and Stats.
	Status Status
	// Stats is the tool's call record.
	Stats Stats
}
