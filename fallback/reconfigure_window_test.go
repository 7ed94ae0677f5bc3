package fallback

import (
	"sync"
	"testing"
	"time"
)

// TestReconfigureWindow: a reload changes the settings of SEMANTICS §8 too:
// the window's rule, span and minimum, slow calls, and the retry budget's
// feed and burst, from the next verdict (or turn) on.
func TestReconfigureWindow(t *testing.T) {
	base := func(mod func(*Settings)) Settings {
		s := abc()
		s.TripThreshold = 100 // only the window trips
		if mod != nil {
			mod(&s)
		}
		return s
	}
	rate := func(r float64, span time.Duration) func(*Settings) {
		return func(s *Settings) { s.FailureRate, s.RateMinCalls, s.RateWindow = r, 4, span }
	}
	// sfs settles success, failure, success on the primary.
	sfs := func(h *harness) {
		h.begin("a", false).Success()
		h.begin("a", false).Failure(Transient)
		h.begin("a", false).Success()
	}
	fail := func(h *harness) { h.begin("a", false).Failure(Transient) }
	tests := []struct {
		name       string
		before     Settings
		setup      func(h *harness)
		after      Settings
		run        func(h *harness)
		want       State
		wantTokens float64 // the primary's budget after run; -1: not checked
	}{
		{"window turned on", base(nil), sfs, base(rate(0.5, 0)),
			func(h *harness) { sfs(h); fail(h) }, Fallback, -1},
		{"rule changed: the window keeps its counts", base(rate(0.9, 0)), sfs, base(rate(0.5, 0)),
			fail, Fallback, -1},
		{"RateMinCalls lowered applies to the counts held", base(rate(0.3, 0)), func(h *harness) {
			h.begin("a", false).Success()
			h.begin("a", false).Success()
		}, base(func(s *Settings) { s.FailureRate, s.RateMinCalls = 0.3, 3 }), fail, Fallback, -1},
		{"a new span starts a fresh window", base(rate(0.9, 0)), sfs, base(rate(0.5, 20*time.Second)),
			fail, Primary, -1},
		{"window turned off", base(rate(0.5, 0)), sfs, base(nil),
			func(h *harness) { fail(h); sfs(h); fail(h) }, Primary, -1},
		{"slow calls turned on", base(nil), nil,
			base(func(s *Settings) { s.SlowCallAfter, s.SlowCallRate, s.RateMinCalls = time.Second, 0.5, 2 }),
			func(h *harness) {
				h.begin("a", false).SuccessAfter(2 * time.Second)
				h.begin("a", false).SuccessAfter(2 * time.Second)
			}, Fallback, -1},
		{"slow calls turned off", base(func(s *Settings) { s.SlowCallAfter, s.SlowCallRate, s.RateMinCalls = time.Second, 0.5, 2 }), nil,
			base(nil), func(h *harness) {
				h.begin("a", false).SuccessAfter(2 * time.Second)
				h.begin("a", false).SuccessAfter(2 * time.Second)
			}, Primary, -1},
		{"burst lowered: the tokens are capped", base(nil), nil,
			base(func(s *Settings) { s.RetryBudgetBurst = 2 }), func(h *harness) {
				tk := h.begin("a", false)
				if !tk.Retry() || !tk.Retry() || tk.Retry() {
					h.t.Fatal("a budget capped at 2 allowed other than 2 retries")
				}
				tk.Success()
			}, Primary, 0},
		{"burst raised: the level is kept", base(nil), func(h *harness) {
			for range 4 {
				h.m.Retry("a")
			}
		}, base(func(s *Settings) { s.RetryBudgetBurst, s.RetryBudget = 20, 1 }), func(h *harness) {
			h.begin("a", false).Success() // feeds 1
		}, Primary, 7.00},
		{"budget turned off", base(nil), func(h *harness) {
			for range 10 {
				h.m.Retry("a")
			}
		}, base(func(s *Settings) { s.RetryBudget = -1 }), func(h *harness) {
			for range 20 {
				if !h.m.Retry("a") {
					h.t.Fatal("a budget turned off refused a retry")
				}
			}
		}, Primary, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.before)
			if tc.setup != nil {
				tc.setup(h)
			}
			if err := h.m.Reconfigure(tc.after); err != nil {
				t.Fatal(err)
			}
			tc.run(h)
			h.expectState(tc.want)
			if tc.wantTokens >= 0 {
				if got := h.m.budgets[0].Tokens(); got != tc.wantTokens {
					t.Errorf("the primary's budget holds %v tokens, want %v", got, tc.wantTokens)
				}
			}
		})
	}
}

// TestReconfigureWindowConcurrent: the rev 4 settings change while turns
// run, settle, spend and feed (for -race).
func TestReconfigureWindowConcurrent(t *testing.T) {
	s := Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1000, RecoveryTimeout: time.Millisecond}
	m, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				tk, err := m.Next(&Attempts{})
				if err != nil {
					continue
				}
				tk.Retry()
				switch (i + w) % 3 {
				case 0:
					tk.Failure(Transient)
				case 1:
					tk.SuccessAfter(time.Duration(i%3) * time.Second)
				default:
					tk.Success()
				}
			}
		})
	}
	for i := range 200 {
		s.FailureRate = float64(i%3) / 4
		s.RateWindow = time.Duration(1+i%2) * time.Second
		s.SlowCallAfter, s.SlowCallRate = time.Duration(i%2)*time.Second, 0.5
		s.RetryBudget, s.RetryBudgetBurst = float64(i%3-1), float64(1+i%5)
		if err := m.Reconfigure(s); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
