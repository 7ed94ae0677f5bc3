package fallback

import (
	"errors"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// One test per sentence of SEMANTICS §8.1-8.4 about the model breaker (rev 4).

// windowed is abc with a failure-rate window: 30% over 10s, at least 10 calls,
// and a threshold out of reach, so only the window trips.
func windowed() Settings {
	s := abc()
	s.FailureRate, s.RateWindow, s.RateMinCalls, s.TripThreshold = 0.3, 10*time.Second, 10, 100
	return s
}

// mix settles n turns on the primary, one second apart: a failure every
// failEvery-th turn, successes otherwise.
func (h *harness) mix(n, failEvery int) {
	h.t.Helper()
	for i := 1; i <= n; i++ {
		h.clk.Advance(100 * time.Millisecond)
		tk := h.begin("a", false)
		if i%failEvery == 0 {
			tk.Failure(Transient)
		} else {
			tk.Success()
		}
	}
}

func TestWindowSettingsValidation(t *testing.T) {
	for _, c := range []struct {
		s    Settings
		want string
	}{
		{Settings{Primary: "a", FailureRate: 1.5}, "fallback: FailureRate must be in (0, 1], or 0 for off (got 1.5)"},
		{Settings{Primary: "a", FailureRate: -0.1}, "fallback: FailureRate must be in (0, 1]"},
		{Settings{Primary: "a", RateWindow: -time.Second}, "fallback: RateWindow must not be negative (got -1s)"},
		{Settings{Primary: "a", RateMinCalls: -1}, "fallback: RateMinCalls must not be negative (got -1)"},
		{Settings{Primary: "a", SlowCallAfter: -time.Second}, "fallback: SlowCallAfter must not be negative"},
		{Settings{Primary: "a", SlowCallRate: 2}, "fallback: SlowCallRate must be in (0, 1]"},
		{Settings{Primary: "a", RetryBudgetBurst: -1}, "fallback: RetryBudgetBurst must not be negative (got -1)"},
		{Settings{Primary: "a", FailureRate: math.NaN()}, "fallback: FailureRate must be in (0, 1], or 0 for off (got NaN)"},
		{Settings{Primary: "a", SlowCallRate: -0.5}, "fallback: SlowCallRate must be in (0, 1], or 0 for off (got -0.5)"},
		{Settings{Primary: "a", SlowCallRate: math.NaN()}, "fallback: SlowCallRate must be in (0, 1]"},
		{Settings{Primary: "a", RetryBudget: math.NaN()}, "fallback: RetryBudget must be a number (got NaN)"},
		{Settings{Primary: "a", RetryBudgetBurst: math.NaN()}, "fallback: RetryBudgetBurst must not be negative (got NaN)"},
	} {
		_, err := New(c.s)
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v; want %q", c.s, err, c.want)
		}
	}
	// A negative RetryBudget is the one negative value that is not an error: the budget is off.
	if _, err := New(Settings{Primary: "a", RetryBudget: -1, FailureRate: 1, SlowCallRate: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestWindowDefaults(t *testing.T) {
	m, err := New(Settings{Primary: "a", FailureRate: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if m.cfg.rateWindow != 30*time.Second || m.cfg.rule.MinCalls != 20 || m.win.Load().Span() != 30*time.Second {
		t.Fatalf("RateWindow %v, RateMinCalls %d", m.cfg.rateWindow, m.cfg.rule.MinCalls)
	}
	if got := spendAll(m, "a"); got != 10 {
		t.Fatalf("the retry budget starts with %d retries, want 10", got)
	}
	for range 5 { // 5 turns × 0.2
		tk, _ := m.Begin()
		tk.Success()
	}
	if got := spendAll(m, "a"); got != 1 {
		t.Fatalf("5 turns fed %d retries, want 1", got)
	}
	off, _ := New(Settings{Primary: "a"})
	if off.win.Load() != nil {
		t.Fatal("FailureRate zero: the window is on")
	}
}

// §8.1: after a failure, with at least RateMinCalls verdicts and failures /
// verdicts ≥ FailureRate, the manager trips exactly as on the threshold.
func TestFailureRateTripsLikeTheThreshold(t *testing.T) {
	h := newHarness(t, windowed())
	h.mix(9, 3) // 3 failures in 9: under RateMinCalls
	h.expectState(Primary)
	h.clk.Advance(100 * time.Millisecond)
	h.begin("a", false).Failure(Transient) // 4 of 10: 40% ≥ 30%
	trip := at(time.Second)
	h.expectEvents(tr(Primary, Fallback, "a", "b", trip))
	s := h.snap()
	if !s.TrippedAt.Equal(trip) || !s.CooldownEnds.Equal(trip.Add(time.Minute)) || s.CooldownCause != CauseRecoveryTimeout ||
		!s.FallbackActivated || s.ConsecutiveFailures != 0 {
		t.Fatalf("after the rate trip: %+v", s)
	}
	h.begin("b", false)
}

func TestFailureRateBelowTheRateDoesNotTrip(t *testing.T) {
	h := newHarness(t, windowed())
	h.mix(40, 4) // 25% < 30%, never two in a row
	h.expectState(Primary)
	h.expectEvents()
}

func TestFailureRateNeedsMinCalls(t *testing.T) {
	s := windowed()
	s.RateMinCalls = 0 // 20
	h := newHarness(t, s)
	h.mix(19, 2) // 50% of 19 verdicts
	h.expectState(Primary)
	h.mix(1, 1) // the 20th verdict, a failure
	h.expectState(Fallback)
}

// The consecutive rule still applies; whichever fires first trips.
func TestConsecutiveRuleStillTripsWithAWindow(t *testing.T) {
	s := windowed()
	s.TripThreshold = 3
	h := newHarness(t, s)
	h.fail(3, Transient, "a") // 3 verdicts: under RateMinCalls
	h.expectState(Fallback)
}

// A refusal, a cancellation, a stale outcome, a chain entry's and a probe's
// verdicts count nothing in the window; a timeout counts as a failure.
func TestWindowCountsOnlyThePrimarysOwnVerdicts(t *testing.T) {
	h := newHarness(t, windowed())
	old := h.begin("a", false)
	h.begin("a", false).Failure(Transient)
	h.begin("a", false).Success() // a counted success: old's failure is stale
	old.Failure(Transient)
	h.begin("a", false).Cancel()
	h.begin("a", false).Skip()
	var a Attempts
	tk, _ := h.m.Next(&a)
	tk.Fail(Failure{Timeout: true}) // counts; routes the turn past the primary
	tk, _ = h.m.Next(&a)
	if tk.Model() != "b" {
		t.Fatalf("Next = %q", tk.Model())
	}
	tk.Failure(Transient) // an entry serving a turn in Primary: nothing
	if c := h.m.win.Load().Counts(int64(h.clk.Now().Sub(t0))); c.Verdicts != 3 || c.Failures != 2 {
		t.Fatalf("window %+v; want 3 verdicts, 2 failures", c)
	}
}

// Every transition out of Primary clears the window, and the window does not
// act in Fallback or Recovering: a recovered breaker starts with an empty one.
func TestWindowClearedOnTripAndQuietOutsidePrimary(t *testing.T) {
	s := windowed()
	s.TripThreshold, s.RecoverySuccessesNeeded = 3, 1
	h := newHarness(t, s)
	h.mix(5, 3)               // 1 of 5 failed, counted
	h.fail(3, Transient, "a") // the consecutive rule trips
	if c := h.m.win.Load().Counts(int64(h.clk.Now().Sub(t0))); c.Verdicts != 0 {
		t.Fatalf("window after the trip: %+v", c)
	}
	h.begin("b", false).Failure(Transient) // Fallback: a chain entry's failure, not counted
	h.clk.Advance(time.Minute)
	h.begin("a", true).Success() // the probe: not counted; recovered
	h.expectState(Primary)
	if c := h.m.win.Load().Counts(int64(h.clk.Now().Sub(t0))); c.Verdicts != 0 {
		t.Fatalf("window after recovery: %+v", c)
	}
	h.mix(9, 2) // 4 failures of 9: under RateMinCalls, if nothing from before counts
	h.expectState(Primary)
	if c := h.m.win.Load().Counts(int64(h.clk.Now().Sub(t0))); c.Verdicts != 9 || c.Failures != 4 {
		t.Fatalf("window after recovery and 9 turns: %+v", c)
	}
}

// Reset clears the window with the counters.
func TestResetClearsTheWindow(t *testing.T) {
	h := newHarness(t, windowed())
	h.mix(9, 2)
	h.m.Reset()
	if c := h.m.win.Load().Counts(int64(h.clk.Now().Sub(t0))); c.Verdicts != 0 {
		t.Fatalf("window after Reset: %+v", c)
	}
}

// Lazy time: buckets roll when they are touched, with no goroutine; a verdict
// older than RateWindow no longer counts (synctest: the real clock, faked).
func TestWindowBucketsRollLazily(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := New(Settings{Primary: "a", Chain: []string{"b"}, FailureRate: 0.5, RateWindow: 10 * time.Second, RateMinCalls: 4, TripThreshold: 100})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			tk, _ := m.Begin()
			tk.Failure(Transient)
			time.Sleep(time.Second)
		}
		time.Sleep(8 * time.Second) // the first failure (at 0s) leaves the window at 10s
		for range 2 {
			tk, _ := m.Begin()
			tk.Success()
		}
		tk, _ := m.Begin()
		tk.Failure(Transient) // 3 failures of 5 counted: trips; 4 of 6 had the first stayed
		if m.State() != Fallback {
			t.Fatalf("state %v", m.State())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		m, _ := New(Settings{Primary: "a", FailureRate: 0.5, RateWindow: 10 * time.Second, RateMinCalls: 2, TripThreshold: 100})
		tk, _ := m.Begin()
		tk.Failure(Transient)
		time.Sleep(10 * time.Second) // rolled out
		tk, _ = m.Begin()
		tk.Success()
		tk, _ = m.Begin()
		tk.Failure(Transient) // 1 of 2: 50%
		if m.State() != Fallback {
			t.Fatal("want tripped: 1 failure of 2 verdicts")
		}
		if c := m.win.Load().Counts(int64(10 * time.Second)); c.Verdicts != 0 {
			t.Fatalf("cleared at the trip: %+v", c)
		}
	})
}

// spendAll spends model's retry budget down and returns the retries it allowed.
func spendAll(m *Manager, model string) int {
	n := 0
	for m.Retry(model) {
		if n++; n > 1000 {
			break
		}
	}
	return n
}
