package fallback

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// backoffSettings: base 10 s, factor 2, cap 35 s (not a power of two times
// the base, so the cap shows), one probe success closes.
func backoffSettings() Settings {
	s := abc()
	s.RecoveryTimeout, s.RecoveryBackoff, s.MaxRecoveryTimeout = 10*time.Second, 2, 35*time.Second
	s.RecoverySuccessesNeeded = 1
	return s
}

// closeAgain waits out the cooldown running and closes on one probe success.
func (h *harness) closeAgain() {
	h.t.Helper()
	h.clk.Advance(h.snap().CooldownEnds.Sub(h.clk.Now()))
	h.begin("a", true).Success()
	h.expectState(Primary)
}

// wantOpen checks the trip count and the cooldown of the opening in force.
func (h *harness) wantOpen(n int, cool time.Duration, cause Cause) {
	h.t.Helper()
	s := h.snap()
	if s.Trips != n || s.CooldownEnds.Sub(s.TrippedAt) != cool || s.CooldownCause != cause {
		h.t.Fatalf("Trips %d, cooldown %v (%v); want %d, %v (%v)", s.Trips, s.CooldownEnds.Sub(s.TrippedAt), s.CooldownCause, n, cool, cause)
	}
}

// TestBackoffTable has one case per row of docs/SEMANTICS.md §9.1 and §9.2
// for the model breaker, named after the row. The fleet store runs the
// same rows (fleet/model_backoff_test.go).
func TestBackoffTable(t *testing.T) {
	tests := []struct {
		name string
		set  func(*Settings)
		run  func(h *harness)
	}{
		{"Primary → Fallback (trip): n + 1, cooldown c(n) = min(base × f^(n−1), max)", nil, func(h *harness) {
			h.trip()
			h.wantOpen(1, 10*time.Second, CauseRecoveryTimeout)
			h.closeAgain()
			h.trip()
			h.wantOpen(2, 20*time.Second, CauseBackoff)
			h.closeAgain()
			h.trip()
			h.wantOpen(3, 35*time.Second, CauseBackoff) // 40 s, capped
		}},
		{"Recovering → Fallback (TripThreshold-th transient probe failure): n + 1, c(n)", func(s *Settings) { s.TripThreshold = 1 }, func(h *harness) {
			h.trip()
			h.clk.Advance(10 * time.Second)
			h.begin("a", true).Failure(Transient)
			h.wantOpen(2, 20*time.Second, CauseBackoff)
		}},
		{"Recovering → Fallback (a primary that stays down): n keeps rising however long open; only an opening from Primary resets it", func(s *Settings) {
			s.TripThreshold = 1
		}, func(h *harness) {
			h.trip()
			for n, cool := range []time.Duration{20 * time.Second, 35 * time.Second, 35 * time.Second, 35 * time.Second} {
				h.clk.Advance(h.snap().CooldownEnds.Sub(h.clk.Now()))
				h.begin("a", true).Failure(Transient)
				h.wantOpen(n+2, cool, CauseBackoff) // open for 10 s, 30 s, 65 s, 100 s: past max, n kept
			}
		}},
		{"Recovering (transient probe failure below TripThreshold): n unchanged, probation continues", nil, func(h *harness) {
			h.trip()
			h.clk.Advance(10 * time.Second)
			h.begin("a", true).Failure(Transient)
			h.expectState(Recovering)
			if n := h.snap().Trips; n != 1 {
				h.t.Fatalf("Trips = %d, want 1", n)
			}
		}},
		{"Recovering → Fallback (lapsed probe lease re-trips): n + 1, c(n) from the lease end", func(s *Settings) {
			s.TripThreshold, s.ProbeTimeout = 1, 3*time.Second
		}, func(h *harness) {
			h.trip()
			h.clk.Advance(10 * time.Second)
			h.begin("a", true) // lost
			h.clk.Advance(3 * time.Second)
			h.wantOpen(2, 20*time.Second, CauseBackoff)
			if s := h.snap(); !s.TrippedAt.Equal(at(13 * time.Second)) {
				h.t.Fatalf("TrippedAt = %v, want the lease end", s.TrippedAt)
			}
		}},
		{"Recovering → Fallback (rate-limited probe, at once): n unchanged, c(n) of the n in force", nil, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.trip() // n = 2
			h.clk.Advance(20 * time.Second)
			h.begin("a", true).Failure(RateLimit)
			h.wantOpen(2, 20*time.Second, CauseBackoff)
		}},
		{"Primary → Fallback (quota): n unchanged; ends at the hint, or QuotaCooldown, never before c(n)", func(s *Settings) {
			s.QuotaCooldown = 15 * time.Second
		}, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.begin("a", false).Fail(Failure{Kind: Quota}) // from Primary
			h.wantOpen(1, 15*time.Second, CauseQuota)      // QuotaCooldown 15 s > c(1)
			h.closeAgain()
			h.trip() // n = 2: c(2) = 20 s
			h.clk.Advance(20 * time.Second)
			h.begin("a", true).Fail(Failure{Kind: Quota})
			h.wantOpen(2, 20*time.Second, CauseQuota) // QuotaCooldown 15 s < c(2)
			h.clk.Advance(20 * time.Second)
			h.begin("a", true).Success()
			h.begin("a", false).Fail(Failure{Kind: Quota, Hint: h.clk.Now().Add(time.Minute)})
			h.wantOpen(2, time.Minute, CauseQuota)
		}},
		{"hint later than the opening + c(n): the hint wins (cause hint)", nil, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.fail(2, Transient, "a")
			h.begin("a", false).Fail(Failure{Kind: RateLimit, Hint: h.clk.Now().Add(25 * time.Second)})
			h.wantOpen(2, 25*time.Second, CauseHint)
			h.closeAgain()
			h.fail(2, Transient, "a")
			h.begin("a", false).Fail(Failure{Kind: RateLimit, Hint: h.clk.Now().Add(25 * time.Second)})
			h.wantOpen(3, 35*time.Second, CauseBackoff) // c(3) is later than the hint
		}},
		{"Fallback → Fallback (chain advance) and a refusal: n unchanged", nil, func(h *harness) {
			h.trip()
			h.fail(2, Transient, "b")
			h.fail(2, Transient, "c")
			h.exhausted()
			h.wantOpen(1, 10*time.Second, CauseRecoveryTimeout)
		}},
		{"any → Fallback (hold): n unchanged", nil, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.m.Hold(h.clk.Now().Add(20*time.Second), "INC-1")
			if n := h.snap().Trips; n != 1 {
				h.t.Fatalf("Trips after a hold = %d, want 1", n)
			}
			h.clk.Advance(20 * time.Second)
			h.begin("a", true).Failure(RateLimit) // n stays 1: c(1)
			h.wantOpen(1, 10*time.Second, CauseRecoveryTimeout)
		}},
		{"closedAt: an opening max or more after entering Primary counts from n = 0; a pure read shows 0", nil, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.trip()
			h.closeAgain() // n = 2, closed now
			h.clk.Advance(35*time.Second - time.Nanosecond)
			if n := h.snap().Trips; n != 2 {
				h.t.Fatalf("Trips just before the reset window = %d, want 2", n)
			}
			h.clk.Advance(time.Nanosecond)
			if n := h.snap().Trips; n != 0 {
				h.t.Fatalf("Trips after the reset window = %d, want 0", n)
			}
			h.trip()
			h.wantOpen(1, 10*time.Second, CauseRecoveryTimeout)
		}},
		{"Reset: n = 0", nil, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.trip()
			h.m.Reset()
			if n := h.snap().Trips; n != 0 {
				h.t.Fatalf("Trips after Reset = %d", n)
			}
			h.trip()
			h.wantOpen(1, 10*time.Second, CauseRecoveryTimeout)
		}},
		{"Reconfigure keeps n; the new factor applies from the next opening", nil, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.trip() // n = 2, 20 s
			s := backoffSettings()
			s.RecoveryBackoff, s.MaxRecoveryTimeout = 3, time.Hour
			if err := h.m.Reconfigure(s); err != nil {
				h.t.Fatal(err)
			}
			h.wantOpen(2, 20*time.Second, CauseBackoff)
			h.closeAgain()
			h.trip()
			h.wantOpen(3, 90*time.Second, CauseBackoff)
		}},
		{"backoff off (0 or 1): n kept and reported, the cooldown is the base, max is still the reset window", func(s *Settings) {
			s.RecoveryBackoff = 1
		}, func(h *harness) {
			h.trip()
			h.closeAgain()
			h.trip()
			h.wantOpen(2, 10*time.Second, CauseRecoveryTimeout)
			h.closeAgain()
			h.clk.Advance(35 * time.Second)
			h.trip()
			h.wantOpen(1, 10*time.Second, CauseRecoveryTimeout)
		}},
		{"Recovering → Fallback (slow probe, §9.2): at once whatever the streak, n + 1, served", func(s *Settings) {
			s.RecoverySuccessesNeeded, s.SlowCallAfter = 3, time.Second // SlowCallRate not needed
		}, func(h *harness) {
			h.trip()
			h.clk.Advance(10 * time.Second)
			h.begin("a", true).SuccessAfter(time.Second) // on time: a probe success
			h.begin("a", true).SuccessAfter(time.Second)
			if s := h.snap(); s.State != Recovering || s.ProbeSuccesses != 2 {
				h.t.Fatalf("after two fast probes: %+v", s)
			}
			var a Attempts
			p, err := h.m.Next(&a)
			if err != nil || !p.IsProbe() {
				h.t.Fatalf("Next = %q probe %v, %v", p.Model(), p.IsProbe(), err)
			}
			p.SuccessAfter(time.Second + time.Nanosecond)
			h.wantOpen(2, 20*time.Second, CauseBackoff)
			if a.slow(0) {
				h.t.Fatal("the slow probe marked the primary slow for its turn: it was served")
			}
			if _, failed := a.probeFailure(); failed {
				h.t.Fatal("the slow probe recorded a probe failure for its turn: it was served")
			}
		}},
		{"Primary (slow success, SlowCallAfter alone): a success for every rule", func(s *Settings) {
			s.SlowCallAfter = time.Second
		}, func(h *harness) {
			h.fail(2, Transient, "a")
			for range 30 {
				h.begin("a", false).SuccessAfter(time.Hour)
			}
			if s := h.snap(); s.State != Primary || s.ConsecutiveFailures != 0 || s.Trips != 0 {
				h.t.Fatalf("slow successes in Primary: %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := backoffSettings()
			if tt.set != nil {
				tt.set(&s)
			}
			tt.run(newHarness(t, s))
		})
	}
}

// TestCooldownSaturates: c(k) reaches the cap for any k, without overflow.
func TestCooldownSaturates(t *testing.T) {
	for _, tt := range []struct {
		base  time.Duration
		f     float64
		limit time.Duration
		k     int
		want  time.Duration
	}{
		{5 * time.Second, 2, 50 * time.Second, 1, 5 * time.Second},
		{5 * time.Second, 2, 50 * time.Second, 4, 40 * time.Second},
		{5 * time.Second, 2, 50 * time.Second, 5, 50 * time.Second},
		{5 * time.Second, 2, 50 * time.Second, math.MaxInt, 50 * time.Second},
		{time.Hour, 1e9, math.MaxInt64, math.MaxInt32, math.MaxInt64},
		{5 * time.Second, 1, 50 * time.Second, 1000, 5 * time.Second},
		{5 * time.Second, 1.5, 50 * time.Second, 3, 11250 * time.Millisecond},
	} {
		if got := cooldownOf(tt.base, tt.f, tt.limit, tt.k); got != tt.want {
			t.Errorf("c(%d) base %v f %v cap %v = %v, want %v", tt.k, tt.base, tt.f, tt.limit, got, tt.want)
		}
	}
	if got := maxRecovery(Settings{RecoveryTimeout: math.MaxInt64 / 2}); got != math.MaxInt64 {
		t.Errorf("the default cap of a huge base = %v, want saturated", got)
	}
}

// TestBackoffSettings: bad values are errors naming the field.
func TestBackoffSettings(t *testing.T) {
	for _, tt := range []struct {
		f     float64
		max   time.Duration
		field string
	}{
		{math.NaN(), 0, "RecoveryBackoff"},
		{math.Inf(1), 0, "RecoveryBackoff"},
		{math.Inf(-1), 0, "RecoveryBackoff"},
		{0.5, 0, "RecoveryBackoff"},
		{-2, 0, "RecoveryBackoff"},
		{2, 59 * time.Second, "MaxRecoveryTimeout"}, // below the default 60 s
		{2, -time.Second, "MaxRecoveryTimeout"},
		{0, 0, ""},
		{1, 0, ""},
		{2, time.Minute, ""},
	} {
		_, err := New(Settings{Primary: "a", RecoveryBackoff: tt.f, MaxRecoveryTimeout: tt.max})
		var se *SettingsError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("backoff %v max %v: %v", tt.f, tt.max, err)
		case tt.field != "" && (!errors.As(err, &se) || se.Field != tt.field || !errors.Is(err, ErrInvalidSettings)):
			t.Errorf("backoff %v max %v: %v, want an error naming %s", tt.f, tt.max, err, tt.field)
		}
	}
}

// TestSnapshotTripsJSON: the trip count is written as "trips" (omitted
// when 0) and read back; CauseBackoff's text is "backoff".
func TestSnapshotTripsJSON(t *testing.T) {
	in := Snapshot{State: Fallback, Trips: 3, TrippedAt: t0, CooldownEnds: t0.Add(20 * time.Second), CooldownCause: CauseBackoff, Chain: []Entry{}}
	b, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"trips":3`) || !strings.Contains(s, `"cooldown_cause":"backoff"`) {
		t.Fatalf("JSON %s", s)
	}
	var out Snapshot
	if err := out.UnmarshalJSON(b); err != nil || !equalSnap(in, out) || out.Trips != 3 {
		t.Fatalf("read back %+v, %v; want %+v", out, err, in)
	}
	if b, _ := (Snapshot{}).MarshalJSON(); strings.Contains(string(b), "trips") {
		t.Fatalf("n = 0 written: %s", b)
	}
}
