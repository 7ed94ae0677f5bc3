package fallback

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestReconfigure: a live manager takes new settings at once and keeps its
// state; an open breaker stays open until the same time (GATEWAY §9.3).
func TestReconfigure(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
		s     Settings
		check func(t *testing.T, h *harness)
	}{
		{"open breaker keeps its cooldown's end", func(h *harness) { h.trip() },
			Settings{Primary: "a", Chain: []string{"b", "c"}, RecoveryTimeout: 5 * time.Second},
			func(t *testing.T, h *harness) {
				if s := h.snap(); !s.CooldownEnds.Equal(at(time.Minute)) || s.CooldownCause != CauseRecoveryTimeout {
					t.Fatalf("cooldown after Reconfigure: %v %v", s.CooldownEnds, s.CooldownCause)
				}
				h.clk.Advance(time.Minute - time.Nanosecond)
				h.begin("b", false).Success()
				h.clk.Advance(time.Nanosecond)
				h.begin("a", true).Failure(RateLimit) // re-trip: the new cooldown applies
				if s := h.snap(); !s.CooldownEnds.Equal(at(time.Minute + 5*time.Second)) {
					t.Fatalf("next trip's cooldown ends %v, want +5s", s.CooldownEnds)
				}
			}},
		{"hold kept", func(h *harness) { h.m.Hold(at(time.Hour), "INC") },
			Settings{Primary: "a", Chain: []string{"b", "c"}, TripThreshold: 1},
			func(t *testing.T, h *harness) {
				if s := h.snap(); !s.HoldUntil.Equal(at(time.Hour)) || s.HoldReason != "INC" {
					t.Fatalf("hold after Reconfigure: %+v", s)
				}
			}},
		{"lower threshold applies at the next failure", func(h *harness) { h.fail(2, Transient, "a") },
			Settings{Primary: "a", Chain: []string{"b", "c"}, TripThreshold: 2},
			func(t *testing.T, h *harness) {
				h.expectState(Primary) // a change of settings trips nothing by itself
				h.begin("a", false).Failure(Transient)
				h.expectState(Fallback)
			}},
		{"MaxFailCount moves the active entry at once", func(h *harness) {
			h.trip()
			h.begin("b", false).Failure(Transient)
			h.take()
		}, Settings{Primary: "a", Chain: []string{"b", "c"}, MaxFailCount: 1},
			func(t *testing.T, h *harness) {
				h.expectEvents(tr(Fallback, Fallback, "b", "c", t0))
				h.begin("c", false)
			}},
		{"disable kept", func(h *harness) { _ = h.m.Disable("c", at(time.Hour), "r") },
			Settings{Primary: "a", Chain: []string{"b", "c"}, HedgeAfter: time.Second},
			func(t *testing.T, h *harness) {
				if e := h.snap().Chain[1]; e.Available || e.DisabledReason != "r" {
					t.Fatalf("disable after Reconfigure: %+v", e)
				}
				a := &Attempts{}
				run, _ := h.m.Next(a)
				if hg, ok := h.m.Hedge(a, run); !ok || hg.Model() != "b" {
					t.Fatalf("HedgeAfter not applied: %q %v", hg.Model(), ok)
				}
			}},
		{"probe lease follows ProbeTimeout", func(h *harness) {
			h.trip()
			h.clk.Advance(time.Minute)
			h.begin("a", true)
		}, Settings{Primary: "a", Chain: []string{"b", "c"}, ProbeTimeout: time.Second},
			func(t *testing.T, h *harness) {
				h.clk.Advance(time.Second)
				h.begin("a", true) // the first lease ended after 1s
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, abc())
			tc.setup(h)
			h.take()
			if err := h.m.Reconfigure(tc.s); err != nil {
				t.Fatal(err)
			}
			tc.check(t, h)
		})
	}
}

// TestReconfigureRefuses: another primary or chain, or bad settings, is an
// error and changes nothing.
func TestReconfigureRefuses(t *testing.T) {
	tests := []struct {
		s     Settings
		want  error
		field string
	}{
		{Settings{Primary: "x", Chain: []string{"b", "c"}}, ErrChainChanged, "Primary"},
		{Settings{Primary: "a", Chain: []string{"c", "b"}}, ErrChainChanged, "Chain"},
		{Settings{Primary: "a"}, ErrChainChanged, "Chain"},
		{Settings{Primary: "a", Chain: []string{"b", "c"}, TripThreshold: -1}, ErrInvalidSettings, "TripThreshold"},
	}
	for _, tc := range tests {
		h := newHarness(t, abc())
		h.trip()
		before := h.snap()
		err := h.m.Reconfigure(tc.s)
		if !errors.Is(err, tc.want) {
			t.Fatalf("Reconfigure(%+v) = %v, want %v", tc.s, err, tc.want)
		}
		var ce *ChainChangedError
		var se *SettingsError
		switch {
		case errors.As(err, &ce) && ce.Field == tc.field:
		case errors.As(err, &se) && se.Field == tc.field:
		default:
			t.Fatalf("Reconfigure(%+v) = %v, want the field %s named", tc.s, err, tc.field)
		}
		if !equalSnap(h.snap(), before) || h.m.cfg.tripThreshold != DefaultTripThreshold {
			t.Fatalf("a refused Reconfigure changed the manager")
		}
	}
}

// TestReconfigureConcurrent: Reconfigure while turns run (for -race).
func TestReconfigureConcurrent(t *testing.T) {
	m, err := New(Settings{Primary: "a", Chain: []string{"b"}, HedgeAfter: time.Millisecond, ProbeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				a := &Attempts{}
				tk, err := m.Next(a)
				if err != nil {
					continue
				}
				_, _ = tk.Deadline()
				if hg, ok := m.Hedge(a, tk); ok {
					hg.Cancel()
				}
				if (i+w)%3 == 0 {
					tk.Failure(Transient)
				} else {
					tk.Success()
				}
			}
		})
	}
	for i := range 200 {
		s := Settings{Primary: "a", Chain: []string{"b"}, HedgeAfter: time.Duration(i%2) * time.Millisecond,
			ProbeTimeout: time.Duration(i+1) * time.Millisecond, TripThreshold: 1 + i%3, HedgeBudget: float64(i%3) * 0.5}
		if err := m.Reconfigure(s); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
