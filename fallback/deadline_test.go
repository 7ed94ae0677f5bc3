package fallback

import (
	"testing"
	"time"
)

// TestTurnDeadline: a probe ticket's Deadline is its lease end on the
// Settings.Now clock, and an unsettled probe counts as failed at that instant;
// every other ticket has no deadline.
func TestTurnDeadline(t *testing.T) {
	s := abc()
	s.ProbeTimeout = 10 * time.Second
	h := newHarness(t, s)
	if _, ok := (Ticket{}).Deadline(); ok {
		t.Fatal("zero Turn has a deadline")
	}
	if _, ok := h.begin("a", false).Deadline(); ok {
		t.Fatal("a primary turn has a deadline")
	}
	h.trip()
	if _, ok := h.begin("b", false).Deadline(); ok {
		t.Fatal("a fallback turn has a deadline")
	}
	h.clk.Advance(DefaultRecoveryTimeout)
	probe := h.begin("a", true)
	d, ok := probe.Deadline()
	if want := h.clk.Now().Add(10 * time.Second); !ok || !d.Equal(want) {
		t.Fatalf("probe Deadline() = %v, %v; want %v, true", d, ok, want)
	}
	if _, ok := h.begin("b", false).Deadline(); ok {
		t.Fatal("a turn served by the chain while probing has a deadline")
	}
	h.clk.Advance(10*time.Second - time.Nanosecond)
	if s := h.snap(); s.ProbeStartedAt.IsZero() || s.ConsecutiveFailures != 0 {
		t.Fatalf("lease over before its deadline: %+v", s)
	}
	h.clk.Advance(time.Nanosecond)
	if s := h.snap(); !s.ProbeStartedAt.IsZero() || s.ConsecutiveFailures != 1 {
		t.Fatalf("lease not over at its deadline: %+v", s)
	}
}
