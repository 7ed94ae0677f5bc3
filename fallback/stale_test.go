package fallback

import (
	"testing"
	"time"
)

// TestStaleFailures has one case per situation of the stale-failure rule of
// docs/SEMANTICS.md section 3 (rev 2): a failed turn served by model M changes
// nothing when a counted success came from a ticket served by M and issued
// after the failed turn's ticket.
func TestStaleFailures(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"Primary: a late failure older than a counted success changes nothing", func(t *testing.T, h *harness) {
			hung := h.begin("a", false)
			h.fail(1, Transient, "a")
			h.begin("a", false).Success() // resets the streak: counted
			hung.Failure(Transient)
			if s := h.snap(); s.ConsecutiveFailures != 0 || s.State != Primary {
				t.Fatalf("snapshot %+v, want primary with no failures", s)
			}
			h.fail(1, Transient, "a") // issued after the success: fresh
			if s := h.snap(); s.ConsecutiveFailures != 1 {
				t.Fatalf("a fresh failure did not count: %+v", s)
			}
		}},
		{"Primary: late failures cannot trip a primary a newer turn proved", func(t *testing.T, h *harness) {
			var hung []Ticket
			for range 5 {
				hung = append(hung, h.begin("a", false))
			}
			h.fail(1, Transient, "a")
			h.begin("a", false).Success()
			for _, tk := range hung {
				tk.Failure(RateLimit)
			}
			h.expectState(Primary)
			h.expectEvents()
		}},
		{"the counted success issued latest decides, not the one counted last", func(t *testing.T, h *harness) {
			older, early := h.begin("a", false), h.begin("a", false)
			h.fail(1, Transient, "a")
			h.begin("a", false).Success() // counted
			h.fail(1, Transient, "a")
			early.Success() // counted last, issued before the one above
			older.Failure(Transient)
			if s := h.snap(); s.ConsecutiveFailures != 0 {
				t.Fatalf("snapshot %+v, want no failures", s)
			}
		}},
		{"a success that reset no streak proves nothing", func(t *testing.T, h *harness) {
			hung := h.begin("a", false)
			h.begin("a", false).Success()
			hung.Failure(Transient)
			if s := h.snap(); s.ConsecutiveFailures != 1 {
				t.Fatalf("snapshot %+v, want 1 failure", s)
			}
		}},
		{"a primary success never makes a chain entry's failure stale", func(t *testing.T, h *harness) {
			h.trip()
			onB := h.begin("b", false) // hangs
			h.clk.Advance(DefaultRecoveryTimeout)
			h.begin("a", true).Success() // a counted probe success on the primary
			h.expectState(Recovering)
			onB.Failure(Transient)
			if s := h.snap(); s.Chain[0].Attempts != 1 {
				t.Fatalf("b's failure did not spend a strike: %+v", s.Chain)
			}
		}},
		{"a chain entry's success resets no streak: its failures stay fresh", func(t *testing.T, h *harness) {
			h.trip()
			hung := h.begin("b", false)
			h.begin("b", false).Success()
			hung.Failure(Transient)
			if s := h.snap(); s.Chain[0].Attempts != 1 {
				t.Fatalf("snapshot chain %+v, want b with 1 attempt", s.Chain)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, abc())
			tc.run(t, h)
		})
	}
}

// TestProbeCutAtLease: a probe turn bounded by its lease (the caller's
// request ends at Turn.Deadline and the caller settles it as a failure) counts
// once, as the lease's transient failure dated at the lease end; its late
// verdict changes nothing, and the next Begin gets a fresh probe.
func TestProbeCutAtLease(t *testing.T) {
	s := abc()
	s.ProbeTimeout = 10 * time.Second
	s.TripThreshold = 2
	h := newHarness(t, s)
	h.fail(2, Transient, "a")
	h.clk.Advance(DefaultRecoveryTimeout)
	p := h.begin("a", true)
	h.take()
	end, _ := p.Deadline()
	h.clk.Advance(10 * time.Second)
	p.Failure(Transient) // the request was cut at the deadline
	if snap := h.snap(); snap.ConsecutiveFailures != 1 || snap.State != Recovering {
		t.Fatalf("snapshot %+v, want recovering with 1 failure (the lease's)", snap)
	}
	q := h.begin("a", true)
	h.clk.Advance(10 * time.Second)
	q.Failure(Transient)
	h.expectEvents(tr(Recovering, Fallback, "a", "b", end.Add(10*time.Second)))
}
