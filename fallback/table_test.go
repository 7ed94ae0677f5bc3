package fallback

import (
	"testing"
	"time"
)

// One test per row of the SEMANTICS section 3 table.

func TestPrimarySuccessZeroesFailures(t *testing.T) {
	h := newHarness(t, abc())
	h.fail(2, Transient, "a")
	if got := h.snap().ConsecutiveFailures; got != 2 {
		t.Fatalf("ConsecutiveFailures = %d, want 2", got)
	}
	h.begin("a", false).Success()
	if got := h.snap().ConsecutiveFailures; got != 0 {
		t.Fatalf("after a success ConsecutiveFailures = %d, want 0", got)
	}
	h.fail(2, RateLimit, "a")
	h.expectState(Primary)
	h.expectEvents()
}

func TestPrimaryTripsAtThreshold(t *testing.T) {
	for _, kinds := range [][]Kind{
		{Transient, Transient, Transient},
		{RateLimit, RateLimit, RateLimit},
		{Transient, RateLimit, Transient},
	} {
		h := newHarness(t, abc())
		for i, k := range kinds {
			h.clk.Advance(time.Second)
			h.begin("a", false).Failure(k)
			want := Primary
			if i == len(kinds)-1 {
				want = Fallback
			}
			h.expectState(want)
		}
		h.expectEvents(tr(Primary, Fallback, "a", "b", at(3*time.Second)))
		s := h.snap()
		if s.ConsecutiveFailures != 0 || s.ProbeSuccesses != 0 || !s.TrippedAt.Equal(at(3*time.Second)) || !s.FallbackActivated {
			t.Fatalf("after trip: %+v", s)
		}
		if !h.m.FallbackActivated() || h.m.ActiveModel() != "b" {
			t.Fatalf("FallbackActivated %v, ActiveModel %q", h.m.FallbackActivated(), h.m.ActiveModel())
		}
		h.begin("b", false)
	}
}

func TestFallbackToRecoveringAfterCooldown(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.take()
	h.clk.Advance(60*time.Second - time.Nanosecond)
	h.begin("b", false).Success()
	h.expectState(Fallback)
	h.clk.Advance(time.Nanosecond)
	if got := h.m.ActiveModel(); got != "a" {
		t.Fatalf("ActiveModel after the cooldown = %q, want the primary", got)
	}
	h.expectState(Fallback) // the transition itself happens only in Begin
	p := h.begin("a", true)
	h.expectState(Recovering)
	h.expectEvents(tr(Fallback, Recovering, "b", "a", at(60*time.Second)))
	s := h.snap()
	if s.ProbeSuccesses != 0 || !s.ProbeStartedAt.Equal(at(60*time.Second)) || !s.TrippedAt.Equal(t0) {
		t.Fatalf("Recovering snapshot: %+v", s)
	}
	p.Cancel()
}

func TestRecoveringToPrimaryAfterProbeSuccesses(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.fail(1, Transient, "b") // b has one strike
	if err := h.m.SetAvailable("c", false); err != nil {
		t.Fatal(err)
	}
	h.take()
	h.clk.Advance(time.Minute)
	h.begin("a", true).Success()
	h.expectState(Recovering)
	if got := h.snap().ProbeSuccesses; got != 1 {
		t.Fatalf("ProbeSuccesses = %d, want 1", got)
	}
	h.clk.Advance(time.Second)
	h.begin("a", true).Success()
	h.expectState(Primary)
	h.expectEvents(
		tr(Fallback, Recovering, "b", "a", at(time.Minute)),
		tr(Recovering, Primary, "a", "a", at(time.Minute+time.Second)),
	)
	s := h.snap()
	want := Snapshot{
		State:             Primary,
		FallbackActivated: true, // sticky
		Chain: []Entry{
			{Model: "b", Attempts: 0, Available: true},
			{Model: "c", Attempts: 0, Available: false, Failed: true}, // manual disable stays
		},
	}
	if !equalSnap(s, want) {
		t.Fatalf("after recovery:\n got %+v\nwant %+v", s, want)
	}
}

func TestRecoveringRateLimitProbeRetripsAtOnce(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Minute)
	h.begin("a", true).Success()
	h.take()
	h.clk.Advance(time.Second)
	h.begin("a", true).Failure(RateLimit)
	h.expectState(Fallback)
	h.expectEvents(tr(Recovering, Fallback, "a", "b", at(61*time.Second)))
	s := h.snap()
	if !s.TrippedAt.Equal(at(61*time.Second)) || s.ProbeSuccesses != 0 || s.ConsecutiveFailures != 0 {
		t.Fatalf("after re-trip: %+v", s)
	}
	// The cooldown restarts from the re-trip.
	h.clk.Advance(time.Minute - time.Nanosecond)
	h.begin("b", false)
	h.clk.Advance(time.Nanosecond)
	h.begin("a", true)
}

func TestRecoveringTransientProbeFailures(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Minute)
	h.take()
	h.begin("a", true).Success()
	h.begin("a", true).Failure(Transient) // below threshold: streak reset, probation continues
	h.expectState(Recovering)
	if s := h.snap(); s.ProbeSuccesses != 0 || s.ConsecutiveFailures != 1 {
		t.Fatalf("after one transient probe failure: %+v", s)
	}
	h.begin("a", true).Failure(Transient)
	h.begin("a", true).Success() // a success breaks the run of failures
	if s := h.snap(); s.ProbeSuccesses != 1 || s.ConsecutiveFailures != 0 {
		t.Fatalf("after a probe success: %+v", s)
	}
	h.begin("a", true).Failure(Transient)
	h.begin("a", true).Failure(Transient)
	h.expectState(Recovering)
	h.clk.Advance(time.Second)
	h.begin("a", true).Failure(Transient) // third consecutive: re-trip
	h.expectState(Fallback)
	h.expectEvents(
		tr(Fallback, Recovering, "b", "a", at(time.Minute)),
		tr(Recovering, Fallback, "a", "b", at(61*time.Second)),
	)
	if s := h.snap(); !s.TrippedAt.Equal(at(61 * time.Second)) {
		t.Fatalf("TrippedAt = %v", s.TrippedAt)
	}
}

func TestFallbackFailureSpendsServingEntry(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.take()
	b := h.begin("b", false)
	b2 := h.begin("b", false)
	b.Failure(Transient)
	if s := h.snap(); s.Chain[0].Attempts != 1 || s.Chain[0].Failed {
		t.Fatalf("after one failure: %+v", s.Chain)
	}
	h.clk.Advance(time.Second)
	b2.Failure(RateLimit) // either kind is a strike
	h.expectEvents(tr(Fallback, Fallback, "b", "c", at(time.Second)))
	c := h.begin("c", false)
	// A late failure of a turn served by b still spends b, not c.
	h.begin("c", false).Success()
	if s := h.snap(); s.Chain[0].Attempts != 2 || !s.Chain[0].Failed || s.Chain[1].Attempts != 0 {
		t.Fatalf("chain: %+v", s.Chain)
	}
	c.Failure(Transient)
	h.fail(1, Transient, "c")
	h.expectEvents(tr(Fallback, Fallback, "c", "", at(time.Second)))
	e := h.exhausted()
	if e.State != Fallback || !e.ProbeAt.Equal(at(time.Minute)) || e.RetryIn != 59*time.Second {
		t.Fatalf("ExhaustedError %+v", e)
	}
}

func TestFallbackSuccessChangesNothing(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.fail(1, Transient, "b")
	before := h.snap()
	h.begin("b", false).Success()
	if after := h.snap(); !equalSnap(before, after) {
		t.Fatalf("a success in Fallback changed\n%+v\nto\n%+v", before, after)
	}
}
