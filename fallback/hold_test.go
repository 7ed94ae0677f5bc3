package fallback

import (
	"errors"
	"testing"
	"time"
)

// One test per sentence of SEMANTICS §8.5 (the manual hold) and per library
// behaviour of GATEWAY §9.2 (disable with an end) and §9.3 (Reconfigure).

// TestHoldFromEachState: from any state the manager goes to Fallback with
// the events and side effects of a trip, its cooldown ends at the later of
// until and the running one with cause manual, no probe is issued before
// then, and afterwards it recovers as after any cooldown.
func TestHoldFromEachState(t *testing.T) {
	const hold = 10 * time.Minute
	tests := []struct {
		name      string
		setup     func(h *harness)
		wantEvent bool      // a transition to Fallback fires
		fromState State     // its From
		tripped   time.Time // the trip time after the hold
		ends      time.Time // the cooldown's end after the hold
	}{
		{"primary", func(h *harness) { h.fail(2, Transient, "a") }, true, Primary, at(time.Hour), at(time.Hour + hold)},
		{"fallback, shorter running cooldown", func(h *harness) {
			h.clk.Advance(time.Hour - 10*time.Second)
			h.trip() // cooldown ends at 1h + 50s
		}, false, Fallback, at(time.Hour - 10*time.Second), at(time.Hour + hold)},
		{"fallback, later running cooldown (quota)", func(h *harness) {
			h.clk.Advance(time.Hour - time.Second)
			h.begin("a", false).Fail(Failure{Kind: Quota, Hint: at(2 * time.Hour)})
		}, false, Fallback, at(time.Hour - time.Second), at(2 * time.Hour)},
		{"recovering, idle", func(h *harness) {
			h.trip()
			h.clk.Advance(time.Hour)
			h.begin("a", true).Success() // one of two successes needed
		}, true, Recovering, at(time.Hour), at(time.Hour + hold)},
		{"recovering, probe in flight", func(h *harness) {
			h.trip()
			h.clk.Advance(time.Hour)
			h.begin("a", true) // never settled before the hold
		}, true, Recovering, at(time.Hour), at(time.Hour + hold)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, abc())
			tc.setup(h)
			h.clk.t = at(time.Hour)
			h.take()
			h.m.Hold(at(time.Hour+hold), "INC-42")
			if tc.wantEvent {
				h.expectEvents(stamped(tr(tc.fromState, Fallback, "a", "b", at(time.Hour)), "hold", "INC-42", at(time.Hour+hold)))
			} else {
				h.expectEvents()
			}
			s := h.snap()
			if s.State != Fallback || !s.CooldownEnds.Equal(tc.ends) || s.CooldownCause != CauseManual ||
				!s.TrippedAt.Equal(tc.tripped) || !s.FallbackActivated || s.ConsecutiveFailures != 0 ||
				s.ProbeSuccesses != 0 || !s.ProbeStartedAt.IsZero() {
				t.Fatalf("after Hold: %+v", s)
			}
			if !s.HoldUntil.Equal(tc.ends) || s.HoldReason != "INC-42" {
				t.Fatalf("hold shown as until %v reason %q, want %v INC-42", s.HoldUntil, s.HoldReason, tc.ends)
			}
			h.clk.t = tc.ends.Add(-time.Nanosecond)
			h.begin("b", false).Success() // no probe before the hold's end
			h.clk.t = tc.ends
			h.begin("a", true).Success() // then Recovering, as after any cooldown
			h.begin("a", true).Success()
			h.expectState(Primary)
			if s := h.snap(); !s.HoldUntil.IsZero() || s.HoldReason != "" {
				t.Fatalf("after recovery the hold is still shown: %+v", s)
			}
		})
	}
}

// TestHoldNeverShortens: a second hold extends a hold and never shortens it.
func TestHoldNeverShortens(t *testing.T) {
	h := newHarness(t, abc())
	h.m.Hold(at(time.Hour), "first")
	h.m.Hold(at(time.Minute), "second")
	if s := h.snap(); !s.CooldownEnds.Equal(at(time.Hour)) || !s.HoldUntil.Equal(at(time.Hour)) || s.HoldReason != "second" {
		t.Fatalf("after a shorter second hold: ends %v until %v reason %q", s.CooldownEnds, s.HoldUntil, s.HoldReason)
	}
	h.m.Hold(at(2*time.Hour), "third")
	if s := h.snap(); !s.CooldownEnds.Equal(at(2 * time.Hour)) {
		t.Fatalf("a longer hold did not extend: ends %v", s.CooldownEnds)
	}
	h.clk.t = at(time.Hour + time.Minute)
	h.begin("b", false)
}

// TestReleaseNextTurnProbes: Release ends a hold at once; the next turn is
// the probe.
func TestReleaseNextTurnProbes(t *testing.T) {
	h := newHarness(t, abc())
	h.m.Hold(at(time.Hour), "INC-42")
	h.begin("b", false).Success() // published route: the lock-free path
	h.clk.Advance(time.Second)
	h.m.Release()
	if s := h.snap(); !s.CooldownEnds.Equal(at(time.Second)) || !s.HoldUntil.IsZero() {
		t.Fatalf("after Release: %+v", s)
	}
	h.take()
	h.begin("a", true).Success()
	h.expectEvents(stamped(tr(Fallback, Recovering, "b", "a", at(time.Second)), "hold_end", "INC-42", at(time.Second))) // released then
}

// TestReleaseWithoutHold: a trip's cooldown runs on; Release changes nothing.
func TestReleaseWithoutHold(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	before := h.snap()
	h.m.Release()
	if s := h.snap(); !equalSnap(s, before) {
		t.Fatalf("Release without a hold changed %+v into %+v", before, s)
	}
	h.clk.Advance(30 * time.Second)
	h.begin("b", false)
}

// TestHoldNoChain: a held manager with no chain refuses turns with
// ErrExhausted (Held) until the hold ends, then probes and recovers.
func TestHoldNoChain(t *testing.T) {
	for _, release := range []bool{false, true} {
		h := newHarness(t, Settings{Primary: "a"})
		h.m.Hold(at(time.Minute), "INC-7")
		h.expectEvents(stamped(tr(Primary, Fallback, "a", "", t0), "hold", "INC-7", at(time.Minute)))
		e := h.exhausted()
		if !e.Held || e.State != Fallback || !e.ProbeAt.Equal(at(time.Minute)) || e.RetryIn != time.Minute {
			t.Fatalf("refusal: %+v", e)
		}
		if got := h.m.ActiveModel(); got != "" {
			t.Fatalf("ActiveModel = %q, want \"\" while held", got)
		}
		if (&Attempts{}).Usable(h.m) {
			t.Fatal("Usable = true while held with no chain")
		}
		h.clk.Advance(30 * time.Second)
		if e := h.exhausted(); e.RetryIn != 30*time.Second || e.Error() == "" {
			t.Fatalf("refusal after 30s: %+v", e)
		}
		if release {
			h.m.Release()
		} else {
			h.clk.Advance(30 * time.Second)
		}
		h.begin("a", true).Success()
		h.begin("a", true).Success()
		h.expectState(Primary)
		h.begin("a", false)
	}
}

// TestHoldNoChainFromFallback: a no-chain manager tripped by failures keeps
// serving the primary; a hold then refuses it (a Fallback -> Fallback event
// to "").
func TestHoldNoChainFromFallback(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a"})
	h.fail(3, Transient, "a")
	h.begin("a", false).Success() // bookkeeping trip: still the primary
	h.take()
	h.m.Hold(at(time.Hour), "")
	h.expectEvents(stamped(tr(Fallback, Fallback, "a", "", t0), "hold", "", at(time.Hour)))
	h.exhausted()
}

// TestResetEndsHold: Reset returns to Primary and the hold is gone.
func TestResetEndsHold(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a"})
	h.m.Hold(at(time.Hour), "x")
	h.m.Reset()
	h.begin("a", false)
	if s := h.snap(); !s.HoldUntil.IsZero() || !s.CooldownEnds.IsZero() {
		t.Fatalf("after Reset: %+v", s)
	}
}

// TestHoldPastUntil: an until that has passed is a trip whose cooldown has
// ended: the next turn probes.
func TestHoldPastUntil(t *testing.T) {
	h := newHarness(t, abc())
	h.clk.Advance(time.Hour)
	h.m.Hold(at(time.Minute), "late")
	h.expectState(Fallback)
	if s := h.snap(); !s.HoldUntil.IsZero() {
		t.Fatalf("a hold that has ended is shown: %+v", s)
	}
	h.begin("a", true)
}

// TestHoldMakesProbeStale: the probe in flight when a hold comes is
// forgotten: its success recovers nothing.
func TestHoldMakesProbeStale(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, RecoverySuccessesNeeded: 1})
	h.trip()
	h.clk.Advance(time.Minute)
	probe := h.begin("a", true)
	h.m.Hold(at(time.Hour), "x")
	probe.Success()
	h.expectState(Fallback)
	h.begin("b", false)
}

// TestDisableWithEnd: a chain entry's manual disable with an end and a
// reason (GATEWAY §9.2) ends by itself at the end, lazily, on every path.
func TestDisableWithEnd(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.take()
	if err := h.m.Disable("b", at(10*time.Second), "flaky"); err != nil {
		t.Fatal(err)
	}
	h.expectEvents(stamped(tr(Fallback, Fallback, "b", "c", t0), "disable", "flaky", at(10*time.Second)))
	s := h.snap()
	if e := s.Chain[0]; e.Available || !e.Failed || !e.DisabledUntil.Equal(at(10*time.Second)) || e.DisabledReason != "flaky" {
		t.Fatalf("disabled entry: %+v", e)
	}
	h.clk.Advance(10*time.Second - time.Nanosecond)
	h.begin("c", false).Success() // lock-free route, valid until the disable's end
	h.clk.Advance(time.Nanosecond)
	if got := h.m.ActiveModel(); got != "b" {
		t.Fatalf("ActiveModel after the end = %q, want b", got)
	}
	if e := h.snap().Chain[0]; !e.Available || e.Failed || !e.DisabledUntil.IsZero() || e.DisabledReason != "" {
		t.Fatalf("entry after the end (pure read): %+v", e)
	}
	h.expectEvents() // pure reads deliver nothing
	h.begin("b", false).Success()
	h.expectEvents(stamped(tr(Fallback, Fallback, "c", "b", at(10*time.Second)), "disable_end", "flaky", at(10*time.Second)))
}

// TestDisableForever: a zero until disables until Enable; Disable of the
// primary or a stranger is ErrNotInChain; an until that has passed enables.
func TestDisableForever(t *testing.T) {
	h := newHarness(t, abc())
	if err := h.m.Disable("b", time.Time{}, "maint"); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(1000 * time.Hour)
	if e := h.snap().Chain[0]; e.Available || !e.DisabledUntil.IsZero() || e.DisabledReason != "maint" {
		t.Fatalf("entry: %+v", e)
	}
	h.trip()
	h.begin("c", false)
	if err := h.m.Enable("b"); err != nil {
		t.Fatal(err)
	}
	h.begin("b", false)
	for _, bad := range []string{"a", "z"} {
		if err := h.m.Disable(bad, time.Time{}, ""); !errors.Is(err, ErrNotInChain) {
			t.Fatalf("Disable(%q) = %v, want ErrNotInChain", bad, err)
		}
	}
	if err := h.m.Disable("b", at(time.Second), "past"); err != nil {
		t.Fatal(err)
	}
	if e := h.snap().Chain[0]; !e.Available {
		t.Fatalf("a disable whose end has passed: %+v", e)
	}
}

// TestDisableExpiresOnSettle: a chain entry's strike taken after another's
// disable ended sees the entry enabled (the settlement applies the expiry
// first).
func TestDisableExpiresOnSettle(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	_ = h.m.Disable("b", at(time.Second), "")
	tk := h.begin("c", false)
	h.clk.Advance(time.Second)
	h.take()
	tk.Failure(Transient)
	h.expectEvents(stamped(tr(Fallback, Fallback, "c", "b", at(time.Second)), "disable_end", "", at(time.Second)))
}
