package breaker

import (
	"testing"
	"time"
)

// rateFixture is a fixture with the failure-rate window on (FailureRate 0.5,
// RateWindow 10s, RateMinCalls 10) and a consecutive threshold out of reach,
// changed further by mod.
func rateFixture(t *testing.T, mod func(*Settings)) *fixture {
	t.Helper()
	return newFixtureWith(t, func(s *Settings) {
		s.FailureThreshold, s.FailureRate, s.RateWindow, s.RateMinCalls = 100, 0.5, 10*time.Second, 10
		if mod != nil {
			mod(s)
		}
	})
}

// alternate settles n calls in Closed, every second one a failure (the first
// a success), so that the consecutive count never passes 1.
func (f *fixture) alternate(n int) {
	f.t.Helper()
	for i := range n {
		if p := f.allow(); i%2 == 0 {
			p.Success()
		} else {
			p.Failure()
		}
	}
}

// TestRateWindow has one row per sentence of docs/SEMANTICS.md §8.1 that
// concerns the tool breaker.
func TestRateWindow(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Settings)
		run  func(f *fixture)
	}{
		{"FailureRate zero: off (half the calls fail, nothing trips)", func(s *Settings) { s.FailureRate = 0 }, func(f *fixture) {
			f.alternate(100)
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"after a failure, min verdicts reached and failures/verdicts >= FailureRate: trips as on the threshold", nil, func(f *fixture) {
			f.alternate(9) // 4 failures of 9: below RateMinCalls
			f.want(Closed, 0, f.now(), zeroTime)
			f.clock.Advance(time.Second)
			f.allow().Failure() // 5 of 10
			f.want(Open, 1, f.now(), zeroTime)
			f.wantEvents("search:closed->open")
			if e := f.refuse(); e.RetryIn != testRecovery {
				t.Fatalf("RetryIn %v, want the cooldown %v from the failure", e.RetryIn, testRecovery)
			}
		}},
		{"below FailureRate: no trip", nil, func(f *fixture) {
			for range 12 {
				f.allow().Success()
			}
			f.alternate(12) // 6 failures of 24
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"RateMinCalls zero: 20 verdicts", func(s *Settings) { s.RateMinCalls = 0 }, func(f *fixture) {
			f.alternate(19) // 9 of 19
			f.allow().Success()
			f.want(Closed, 0, f.now(), zeroTime)
			f.allow().Failure() // 10 of 21
			f.want(Closed, 1, f.now(), zeroTime)
			f.allow().Failure() // 11 of 22
			f.want(Open, 2, f.now(), zeroTime)
		}},
		{"RateWindow zero: 30s, in 3s buckets", func(s *Settings) { s.RateWindow = 0 }, func(f *fixture) {
			f.alternate(8) // 4 failures at t0, in [0, 3s)
			f.clock.Advance(29 * time.Second)
			f.alternate(2) // 5 of 10 at 29s: trips, the first bucket still counts
			f.want(Open, 1, f.now(), zeroTime)
		}},
		{"verdicts leave the window with their bucket (RateWindow/10)", nil, func(f *fixture) {
			f.alternate(8) // at t0, in [0, 1s)
			f.clock.Advance(10 * time.Second)
			f.alternate(8) // [0, 1s) has left: 4 of 8
			f.want(Closed, 1, f.now(), zeroTime)
			f.clock.Advance(9 * time.Second) // 19s: [10s, 11s) still counts
			f.alternate(2)                   // 5 of 10
			f.want(Open, 1, f.now(), zeroTime)
		}},
		{"a cancellation counts nothing", nil, func(f *fixture) {
			for range 20 {
				f.allow().Cancel()
			}
			f.alternate(9)
			f.want(Closed, 0, f.now(), zeroTime)
		}},
		{"a stale failure counts nothing", nil, func(f *fixture) {
			hung := make([]Permit, 6)
			for i := range hung {
				hung[i] = f.allow()
			}
			f.allow().Failure()
			f.allow().Success() // resets the count: the hung calls started before it
			for _, p := range hung {
				p.Failure() // stale: no count, no window
			}
			f.want(Closed, 0, t0, zeroTime)
			f.alternate(6) // 4 failures of 8: below the minimum
			f.want(Closed, 1, t0, zeroTime)
		}},
		{"a timeout counts by the time it arrives, not by its date", nil, func(f *fixture) {
			hung := f.allow()
			f.clock.Advance(20 * time.Second)
			for range 5 {
				f.allow().Success()
			}
			f.fail(4)                           // 4 of 9
			hung.TimeoutAfter(20 * time.Second) // dated at t0, out of the window; counted now: 5 of 10
			f.want(Open, 5, f.now(), zeroTime)
		}},
		{"the consecutive rule still applies: whichever fires first", func(s *Settings) { s.FailureThreshold = 3 }, func(f *fixture) {
			f.fail(3) // 3 verdicts: below RateMinCalls
			f.want(Open, 3, f.now(), zeroTime)
		}},
		{"every transition out of Closed clears the window", func(s *Settings) { s.RateWindow = time.Minute }, func(f *fixture) {
			f.alternate(9)
			f.allow().Failure() // trips
			f.clock.Advance(testRecovery)
			f.allow().Success() // the probe closes it
			f.want(Closed, 0, f.now().Add(-testRecovery), zeroTime)
			f.alternate(9) // 4 of 9 since the recovery: the old verdicts are gone
			f.want(Closed, 0, f.now(), zeroTime)
		}},
		{"the window does not act in Open or HalfOpen", func(s *Settings) { s.RateWindow = time.Minute }, func(f *fixture) {
			f.alternate(9)
			stragglers := []Permit{f.allow(), f.allow(), f.allow()}
			f.allow().Failure()     // 5 of 10: trips
			stragglers[0].Success() // Open: ignored, not counted
			f.clock.Advance(testRecovery)
			probe := f.allow()
			stragglers[1].Success() // HalfOpen, not the probe: ignored
			probe.Success()
			stragglers[2].Success() // Closed: counts (1)
			f.alternate(8)          // 4 of 9
			f.want(Closed, 1, f.now(), zeroTime)
			f.allow().Failure() // 5 of 10
			f.want(Open, 2, f.now(), zeroTime)
		}},
		{"Reset clears the window", nil, func(f *fixture) {
			f.alternate(9)
			f.b.Reset()
			f.allow().Failure() // 1 of 1
			f.want(Closed, 1, f.now(), zeroTime)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(rateFixture(t, tc.mod)) })
	}
}
