package breaker

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// The reference model's failure-rate window and slow-call rule (SEMANTICS
// §8.1, §8.2), written naively: a list of verdicts with their arrival times,
// counted when they fall in the last ten buckets, instead of a ring.

// windowRule and slowRule switch the model's rate rules on (a test switches
// each off to check that the property test notices).
var (
	windowRule   = true
	slowRule     = true
	windowClears = true // on every transition out of (and into) Closed
)

// rateModel is the model's window settings and contents.
type rateModel struct {
	failureRate float64
	span        time.Duration // RateWindow
	minCalls    int
	slowAfter   time.Duration
	slowRate    float64
	verdicts    []verdict
}

// verdict is one outcome counted by the model's window.
type verdict struct {
	at         time.Duration // since t0
	fail, slow bool
}

// on reports whether the window exists (either rule configured).
func (r *rateModel) on() bool {
	return r.failureRate > 0 || r.slowAfter > 0 && r.slowRate > 0
}

// settings fills the window's fields of s.
func (r *rateModel) settings(s *Settings) {
	s.FailureRate, s.RateWindow, s.RateMinCalls = r.failureRate, r.span, r.minCalls
	s.SlowCallAfter, s.SlowCallRate = r.slowAfter, r.slowRate
}

// count returns the verdicts, failures and slow successes in the window
// ending at now: those whose bucket (span/10 wide, from t0) is one of the ten
// up to now's.
func (r *rateModel) count(now time.Time) (n, fails, slow int) {
	width := r.span / 10
	if r.span == 0 {
		width = 3 * time.Second
	}
	cur := now.Sub(t0) / width
	for _, v := range r.verdicts {
		if v.at/width > cur-10 {
			n++
			if v.fail {
				fails++
			}
			if v.slow {
				slow++
			}
		}
	}
	return n, fails, slow
}

// add records a verdict at now and reports whether the window trips.
func (r *rateModel) add(now time.Time, fail, slow bool) bool {
	if !r.on() {
		return false
	}
	r.verdicts = append(r.verdicts, verdict{now.Sub(t0), fail, slow})
	n, fails, slows := r.count(now)
	minCalls := r.minCalls
	if minCalls == 0 {
		minCalls = 20
	}
	if n < minCalls {
		return false
	}
	trip := false
	switch {
	case fail:
		trip = windowRule && r.failureRate > 0 && float64(fails)/float64(n) >= r.failureRate
	case slow:
		trip = slowRule && float64(slows)/float64(n) >= r.slowRate
	}
	if trip {
		coverage[map[bool]string{true: "failure-rate trip", false: "slow-call trip"}[fail]]++
	}
	return trip
}

// isSlow reports whether a success whose first content came after ttfc is a
// slow success (negative ttfc: not known).
func (r *rateModel) isSlow(ttfc time.Duration) bool {
	return r.slowAfter > 0 && r.slowRate > 0 && ttfc > r.slowAfter
}

// pickRate draws the window settings of a history: off in a third of them.
func pickRate(next func(int) int) rateModel {
	if next(3) == 0 {
		return rateModel{}
	}
	ms := time.Millisecond
	r := rateModel{span: time.Duration(next(4)*20) * ms, minCalls: next(5)}
	if r.span == 0 {
		r.minCalls = 1 + next(4) // a 30s window: few verdicts, so that it trips at all
	}
	rates := []float64{0, 0.25, 0.5, 1}
	r.failureRate = rates[next(len(rates))]
	if next(2) == 0 {
		r.slowAfter, r.slowRate = time.Duration(1+next(5))*ms, rates[1+next(3)]
	}
	return r
}

// TestPropertyNoticesRulesSwitchedOff switches each rate rule (and rev 3's
// timeout dating) off in the model alone and expects the property test to
// find a history where the breaker and the model diverge: the histories
// exercise every rule.
func TestPropertyNoticesRulesSwitchedOff(t *testing.T) {
	for _, rule := range []struct {
		name string
		flag *bool
	}{
		{"failure-rate window (§8.1)", &windowRule},
		{"slow-call rule (§8.2)", &slowRule},
		{"window cleared out of Closed (§8.1)", &windowClears},
		{"timeout dating (§1 rev 3, §8.4)", &timeoutDating},
		{"backoff of repeated trips (§9.1)", &backoffRule},
		{"reset of the trip count (§9.1)", &tripsReset},
		{"a slow probe re-opens (§9.2)", &slowProbeRule},
	} {
		t.Run(rule.name, func(t *testing.T) {
			*rule.flag = false
			defer func() { *rule.flag = true }()
			for seed := uint64(1); seed <= 400; seed++ {
				r := rand.New(rand.NewPCG(seed, 0x10097))
				if diverges(func(tb testing.TB) { history(tb, 300, r.IntN) }) {
					return
				}
			}
			t.Fatalf("no history noticed the %s switched off in the model", rule.name)
		})
	}
}

// diverges runs fn with a testing.TB that records a failure instead of
// failing the test, and reports whether fn failed.
func diverges(fn func(testing.TB)) (failed bool) {
	rec := &recorder{}
	done := make(chan struct{})
	go func() { // Fatalf ends the goroutine with runtime.Goexit
		defer close(done)
		fn(rec)
	}()
	<-done
	return rec.failed
}

// recorder is a testing.TB whose failures are only recorded.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(...any)          { r.failed = true; runtime.Goexit() }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Logf(string, ...any)   {}
func (r *recorder) Failed() bool          { return r.failed }
