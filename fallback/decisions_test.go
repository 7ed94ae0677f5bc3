package fallback

import (
	"testing"
	"time"
)

// Tests of the decision paragraphs of SEMANTICS section 3.

func TestNoChainTripsButNeverExhausts(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a"})
	h.fail(3, Transient, "a")
	h.expectState(Fallback)
	h.expectEvents(tr(Primary, Fallback, "a", "a", t0))
	if !h.m.FallbackActivated() {
		t.Fatal("FallbackActivated = false after a trip")
	}
	// Fallback keeps routing to the primary; its verdicts are ignored.
	for range 10 {
		h.begin("a", false).Failure(RateLimit)
	}
	h.begin("a", false).Success()
	if s := h.snap(); s.State != Fallback || s.ConsecutiveFailures != 0 || !s.TrippedAt.Equal(t0) || len(s.Chain) != 0 {
		t.Fatalf("Fallback with no chain: %+v", s)
	}
	if got := h.m.ActiveModel(); got != "a" {
		t.Fatalf("ActiveModel = %q", got)
	}
	h.clk.Advance(time.Minute)
	p := h.begin("a", true)
	h.expectEvents(tr(Fallback, Recovering, "a", "a", at(time.Minute)))
	// With the probe in flight, other turns go to the primary, not as probes,
	// and their verdicts do not move the probe streak.
	o1 := h.begin("a", false)
	o2 := h.begin("a", false)
	if got := h.m.ActiveModel(); got != "a" {
		t.Fatalf("ActiveModel with a probe in flight = %q", got)
	}
	o1.Success()
	o2.Failure(RateLimit)
	if s := h.snap(); s.State != Recovering || s.ProbeSuccesses != 0 || s.ConsecutiveFailures != 0 {
		t.Fatalf("non-probe verdicts moved the probe streak: %+v", s)
	}
	p.Success()
	h.begin("a", true).Success()
	h.expectState(Primary)
	h.expectEvents(tr(Recovering, Primary, "a", "a", at(time.Minute)))
}

func TestOneProbeInFlight(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Minute)
	p := h.begin("a", true)
	if got := h.m.ActiveModel(); got != "b" {
		t.Fatalf("ActiveModel with a probe in flight = %q, want b", got)
	}
	// Others are served by the chain, and their failures spend it.
	h.fail(2, Transient, "b")
	h.begin("c", false).Success()
	h.fail(2, Transient, "c")
	if got := h.m.ActiveModel(); got != "" {
		t.Fatalf("ActiveModel with the chain spent = %q", got)
	}
	e := h.exhausted() // fail fast until recovery is proven
	if e.State != Recovering || !e.ProbeAt.Equal(at(time.Minute+5*time.Minute)) || e.RetryIn != 5*time.Minute {
		t.Fatalf("ExhaustedError while probing: %+v", e)
	}
	h.expectState(Recovering)
	p.Success()
	h.begin("a", true).Success() // the slot is free again: the next Begin probes
	h.expectState(Primary)
	if s := h.snap(); s.Chain[0].Attempts != 0 || s.Chain[1].Attempts != 0 {
		t.Fatalf("recovery did not clear attempts: %+v", s.Chain)
	}
}

func TestCancelledProbeFreesTheSlot(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Minute)
	h.begin("a", true).Success()
	before := h.snap()
	p := h.begin("a", true)
	h.begin("b", false).Cancel()
	p.Cancel()
	after := h.snap()
	if !equalSnap(before, after) {
		t.Fatalf("cancel changed counters:\n%+v\n%+v", before, after)
	}
	h.begin("a", true).Success()
	h.expectState(Primary)
}

func TestLeaseExpiryCountsAsOneTransientProbeFailure(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Minute)
	h.begin("a", true).Success()
	lost := h.begin("a", true) // never settled in time
	h.clk.Advance(5*time.Minute - time.Nanosecond)
	h.begin("b", false).Success()
	h.clk.Advance(time.Nanosecond) // lease end
	// Pure reads already see the expiry.
	if s := h.snap(); s.State != Recovering || s.ProbeSuccesses != 0 || s.ConsecutiveFailures != 1 || !s.ProbeStartedAt.IsZero() {
		t.Fatalf("after the lease end: %+v", s)
	}
	if got := h.m.ActiveModel(); got != "a" {
		t.Fatalf("ActiveModel after the lease end = %q, want the primary", got)
	}
	p := h.begin("a", true)
	lost.Success() // late: ignored
	if s := h.snap(); s.ProbeSuccesses != 0 || s.ConsecutiveFailures != 1 {
		t.Fatalf("a late probe verdict counted: %+v", s)
	}
	p.Success()
	h.begin("a", true).Success()
	h.expectState(Primary)
}

func TestLeaseExpiryRetripBackdated(t *testing.T) {
	s := abc()
	s.TripThreshold = 1
	s.ProbeTimeout = 90 * time.Second
	h := newHarness(t, s)
	h.fail(1, Transient, "a")
	h.clk.Advance(time.Minute)
	h.begin("a", true) // lost
	leaseEnd := at(time.Minute + 90*time.Second)
	h.take()
	h.clk.Advance(100 * time.Second) // 10s past the lease end
	if got := h.m.State(); got != Fallback {
		t.Fatalf("State after the lease end = %v, want fallback", got)
	}
	if got := h.snap().TrippedAt; !got.Equal(leaseEnd) {
		t.Fatalf("TrippedAt = %v, want the lease end %v", got, leaseEnd)
	}
	h.expectEvents() // pure reads fire nothing
	h.begin("b", false)
	h.expectEvents(tr(Recovering, Fallback, "a", "b", leaseEnd))
	// The cooldown runs from the lease end.
	h.clk.Advance(50*time.Second - time.Nanosecond)
	h.begin("b", false)
	h.clk.Advance(time.Nanosecond)
	h.begin("a", true)
	h.expectEvents(tr(Fallback, Recovering, "b", "a", leaseEnd.Add(time.Minute)))
}

func TestLeaseExpiryRetripAndProbeInOneBegin(t *testing.T) {
	s := abc()
	s.TripThreshold = 1
	h := newHarness(t, s)
	h.fail(1, Transient, "a")
	h.clk.Advance(time.Minute)
	h.begin("a", true) // lost
	h.take()
	h.clk.Advance(5*time.Minute + time.Minute) // lease end + cooldown
	if got := h.m.ActiveModel(); got != "a" {
		t.Fatalf("ActiveModel = %q, want the primary", got)
	}
	h.begin("a", true)
	h.expectEvents(
		tr(Recovering, Fallback, "a", "b", at(6*time.Minute)),
		tr(Fallback, Recovering, "b", "a", at(7*time.Minute)),
	)
}

func TestStaleTicketsAreIgnored(t *testing.T) {
	h := newHarness(t, abc())
	old1 := h.begin("a", false)
	old2 := h.begin("a", false)
	h.trip()
	// A failure from before the trip does not touch the chain or the trip time.
	h.clk.Advance(10 * time.Second)
	old1.Failure(Transient)
	if s := h.snap(); s.ConsecutiveFailures != 0 || s.Chain[0].Attempts != 0 || !s.TrippedAt.Equal(t0) {
		t.Fatalf("a pre-trip failure counted: %+v", s)
	}
	bOld := h.begin("b", false)
	h.clk.Advance(time.Minute)
	p1 := h.begin("a", true)
	p1.Success()
	h.begin("a", true).Success()
	h.expectState(Primary)
	// From before the recovery: a chain failure does not spend the renewed budget.
	bOld.Failure(Transient)
	if s := h.snap(); s.Chain[0].Attempts != 0 {
		t.Fatalf("a pre-recovery chain failure spent the renewed budget: %+v", s.Chain)
	}
	// A success from before the trip does not reset the new streak.
	h.fail(2, Transient, "a")
	old2.Success()
	p1.Failure(RateLimit) // settled twice: ignored
	if s := h.snap(); s.ConsecutiveFailures != 2 || s.State != Primary {
		t.Fatalf("stale verdicts counted: %+v", s)
	}
	h.fail(1, Transient, "a")
	h.expectState(Fallback)
}

func TestExhaustionDoesNotRestartCooldown(t *testing.T) {
	s := abc()
	s.MaxFailCount = 1
	h := newHarness(t, s)
	h.trip()
	h.clk.Advance(10 * time.Second)
	h.fail(1, Transient, "b")
	h.fail(1, Transient, "c")
	for range 3 {
		h.clk.Advance(10 * time.Second)
		e := h.exhausted()
		if !e.ProbeAt.Equal(at(time.Minute)) {
			t.Fatalf("ProbeAt = %v, want trip + 60s", e.ProbeAt)
		}
	}
	h.clk.Advance(20 * time.Second)
	h.begin("a", true)
	if got := h.m.ActiveModel(); got != "" {
		t.Fatalf("ActiveModel with the probe in flight and the chain spent = %q", got)
	}
}

func TestChainAdvanceEvents(t *testing.T) {
	h := newHarness(t, abc())
	if err := h.m.SetAvailable("b", false); err != nil {
		t.Fatal(err)
	}
	h.expectEvents() // not in Fallback: no event
	h.trip()
	h.expectEvents(tr(Primary, Fallback, "a", "c", t0))
	h.clk.Advance(time.Second)
	must(t, h.m.SetAvailable("b", true))
	h.expectEvents(tr(Fallback, Fallback, "c", "b", at(time.Second)))
	must(t, h.m.SetAvailable("c", false)) // not the active entry: no event
	must(t, h.m.SetAvailable("b", true))  // no change: no event
	h.expectEvents()
	must(t, h.m.SetAvailable("b", false))
	h.expectEvents(tr(Fallback, Fallback, "b", "", at(time.Second)))
	h.exhausted()
	must(t, h.m.SetAvailable("c", true))
	h.expectEvents(tr(Fallback, Fallback, "", "c", at(time.Second)))
	h.begin("c", false)
}

func TestTripWithEveryEntryDisabled(t *testing.T) {
	h := newHarness(t, abc())
	must(t, h.m.SetAvailable("b", false))
	must(t, h.m.SetAvailable("c", false))
	h.trip()
	h.expectEvents(tr(Primary, Fallback, "a", "", t0))
	h.exhausted()
}

func TestManualDisablesSurviveRecoveryAndReset(t *testing.T) {
	h := newHarness(t, abc())
	must(t, h.m.SetAvailable("b", false))
	h.trip()
	h.clk.Advance(time.Minute)
	h.begin("a", true).Success()
	h.begin("a", true).Success()
	h.expectState(Primary)
	if s := h.snap(); s.Chain[0].Available || !s.Chain[0].Failed {
		t.Fatalf("recovery re-enabled b: %+v", s.Chain)
	}
	h.trip()
	h.fail(1, Transient, "c")
	h.m.Reset()
	s := h.snap()
	want := Snapshot{State: Primary, Chain: []Entry{{Model: "b", Failed: true}, {Model: "c", Available: true}}}
	if !equalSnap(s, want) {
		t.Fatalf("after Reset:\n got %+v\nwant %+v", s, want)
	}
}

func TestReset(t *testing.T) {
	h := newHarness(t, abc())
	old := h.begin("a", false)
	h.fail(2, Transient, "a")
	h.m.Reset() // Primary -> Primary: no event, but counters cleared
	h.expectEvents()
	old.Failure(Transient) // issued before Reset: ignored
	if s := h.snap(); s.ConsecutiveFailures != 0 {
		t.Fatalf("after Reset: %+v", s)
	}
	h.trip()
	h.take()
	h.clk.Advance(time.Second)
	h.m.Reset()
	h.expectEvents(tr(Fallback, Primary, "b", "a", at(time.Second)))
	if h.m.FallbackActivated() {
		t.Fatal("Reset kept the fallback-activated flag")
	}
	h.trip()
	h.clk.Advance(time.Minute)
	p := h.begin("a", true)
	h.take()
	h.m.Reset()
	h.expectEvents(tr(Recovering, Primary, "a", "a", at(61*time.Second)))
	p.Failure(RateLimit) // the probe slot was cleared: ignored
	h.expectState(Primary)
}

func TestSettleTwiceAndZeroTurnAreHarmless(t *testing.T) {
	h := newHarness(t, abc())
	tk := h.begin("a", false)
	cp := tk
	tk.Failure(Transient)
	tk.Failure(Transient)
	cp.Failure(Transient)
	tk.Success()
	if s := h.snap(); s.ConsecutiveFailures != 1 {
		t.Fatalf("a ticket settled 4 times counted %d failures", s.ConsecutiveFailures)
	}
	var zero Ticket
	zero.Success()
	zero.Failure(RateLimit)
	zero.Cancel()
	if zero.Model() != "" || zero.IsProbe() {
		t.Fatal("the zero Turn names a model")
	}
	// Slots are reused: a reissued slot does not let an old ticket count again.
	next := h.begin("a", false)
	tk.Failure(Transient)
	next.Failure(Transient)
	if s := h.snap(); s.ConsecutiveFailures != 2 {
		t.Fatalf("ConsecutiveFailures = %d, want 2", s.ConsecutiveFailures)
	}
}

func TestPureReadsAfterCooldown(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Hour)
	before := h.snap()
	for range 3 {
		if h.m.State() != Fallback || h.m.ActiveModel() != "a" || !h.m.FallbackActivated() {
			t.Fatal("pure reads after the cooldown")
		}
	}
	if after := h.snap(); !equalSnap(before, after) {
		t.Fatal("pure reads changed the manager")
	}
	// The Snapshot's Chain is a fresh copy.
	before.Chain[0].Attempts = 99
	if h.snap().Chain[0].Attempts != 0 {
		t.Fatal("Snapshot.Chain aliases the manager")
	}
}
