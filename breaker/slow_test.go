package breaker

import (
	"context"
	"testing"
	"time"
)

// slowFixture is a fixture with the slow-call rule on (SlowCallAfter 1s,
// SlowCallRate 0.5, RateMinCalls 10) and no failure-rate rule, changed
// further by mod.
func slowFixture(t *testing.T, mod func(*Settings)) *fixture {
	t.Helper()
	return newFixtureWith(t, func(s *Settings) {
		s.SlowCallAfter, s.SlowCallRate, s.RateMinCalls = time.Second, 0.5, 10
		if mod != nil {
			mod(s)
		}
	})
}

// succeed settles n calls as successes whose first content came after ttfc.
func (f *fixture) succeed(n int, ttfc time.Duration) {
	f.t.Helper()
	for range n {
		f.allow().SuccessAfter(ttfc)
	}
}

// TestSlowCalls has one row per sentence of docs/SEMANTICS.md §8.2 (and the
// API's reporting of a call's time to first content).
func TestSlowCalls(t *testing.T) {
	slow := 1500 * time.Millisecond
	tests := []struct {
		name string
		mod  func(*Settings)
		run  func(f *fixture)
	}{
		{"SlowCallRate zero: off", func(s *Settings) { s.SlowCallRate = 0 }, func(f *fixture) {
			f.succeed(30, slow)
			f.want(Closed, 0, zeroTime, zeroTime)
		}},
		{"SlowCallAfter zero: off", func(s *Settings) { s.SlowCallAfter = 0 }, func(f *fixture) {
			f.succeed(30, slow)
			f.want(Closed, 0, zeroTime, zeroTime)
		}},
		{"first content later than SlowCallAfter is slow, at it is not", nil, func(f *fixture) {
			f.succeed(10, time.Second) // not slow
			f.succeed(9, time.Second+1)
			f.want(Closed, 0, zeroTime, zeroTime) // 9 slow of 19
			f.allow().SuccessAfter(time.Second + 1)
			f.want(Open, 0, f.now(), zeroTime) // 10 of 20: trips, dated now
			f.wantEvents("search:closed->open")
			if e := f.refuse(); e.RetryIn != testRecovery {
				t.Fatalf("RetryIn %v, want the cooldown %v", e.RetryIn, testRecovery)
			}
		}},
		{"no trip below RateMinCalls verdicts", nil, func(f *fixture) {
			f.succeed(9, slow) // 9 of 9
			f.want(Closed, 0, zeroTime, zeroTime)
			f.succeed(1, slow)
			f.want(Open, 0, f.now(), zeroTime)
		}},
		{"a slow success is a success for every rule: it zeroes the count", nil, func(f *fixture) {
			f.fail(2)
			f.clock.Advance(time.Second)
			f.allow().SuccessAfter(slow)
			f.want(Closed, 0, f.now().Add(-time.Second), zeroTime)
		}},
		{"the probe's slow success re-opens the breaker (§9.2)", nil, func(f *fixture) {
			p := f.probe()
			p.SuccessAfter(time.Hour)
			f.want(Open, 4, f.now(), zeroTime)
		}},
		{"the probe's success on time closes the breaker", nil, func(f *fixture) {
			p := f.probe()
			p.SuccessAfter(time.Second) // at SlowCallAfter: on time
			f.want(Closed, 0, f.now().Add(-testRecovery), zeroTime)
		}},
		{"the slow rule is checked after slow successes only", nil, func(f *fixture) {
			f.succeed(9, slow)
			f.allow().Failure() // 9 slow of 10, but a failure
			f.want(Closed, 1, f.now(), zeroTime)
			f.allow().SuccessAfter(slow) // 10 of 11
			f.want(Open, 0, f.now(), zeroTime)
		}},
		{"Success is never slow; DoneAfter(nil, d) is SuccessAfter(d)", nil, func(f *fixture) {
			for range 30 {
				f.allow().Success()
			}
			for range 29 {
				f.allow().DoneAfter(nil, slow)
			}
			f.want(Closed, 0, zeroTime, zeroTime) // 29 of 59
			f.allow().DoneAfter(nil, slow)
			f.want(Open, 0, f.now(), zeroTime)
		}},
		{"Do: fn's whole answer is its first content", nil, func(f *fixture) {
			ctx := context.Background()
			for range 10 {
				_, _ = Do(ctx, f.b, func(context.Context) (int, error) {
					f.clock.Advance(slow)
					return 1, nil
				})
			}
			f.want(Open, 0, f.now(), zeroTime)
		}},
		{"slow calls and failures share the window and the minimum", func(s *Settings) { s.FailureRate = 0.5 }, func(f *fixture) {
			f.succeed(4, slow)
			f.alternate(4)               // 2 failures, 8 verdicts
			f.allow().SuccessAfter(slow) // 5 slow of 9
			f.allow().Failure()          // 3 failures of 10: below 0.5
			f.want(Closed, 1, f.now(), zeroTime)
			f.allow().SuccessAfter(slow) // 6 slow of 11: trips
			f.want(Open, 0, f.now(), zeroTime)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(slowFixture(t, tc.mod)) })
	}
}
