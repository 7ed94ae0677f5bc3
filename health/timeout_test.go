package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestTimeoutDatedAtStart (SEMANTICS §1, rev 3): a registry permit settled as
// a timeout (Timeout, Done with context.DeadlineExceeded, or Do cut by its
// deadline) is dated at the call's start in the breaker, and the Stats record
// it like any failure.
func TestTimeoutDatedAtStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		settle func(f *fixture) // two hung calls, 40s long
	}{
		{"Timeout", func(f *fixture) {
			a, _ := f.r.Allow("a")
			b, _ := f.r.Allow("a")
			f.clock.Advance(40 * time.Second)
			a.Timeout()
			b.Timeout()
		}},
		{"Done(DeadlineExceeded)", func(f *fixture) {
			a, _ := f.r.Allow("a")
			b, _ := f.r.Allow("a")
			f.clock.Advance(40 * time.Second)
			a.Done(context.DeadlineExceeded)
			b.Done(context.DeadlineExceeded)
		}},
		{"Do cut by its deadline", func(f *fixture) {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			for range 2 {
				_, _ = Do(ctx, f.r, "a", func(context.Context) (int, error) {
					f.clock.Advance(20 * time.Second)
					return 0, errors.New("read: i/o timeout") // its own error, after the deadline
				})
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			start := f.clock.Now()
			tc.settle(f)
			s := f.r.Breaker("a").Snapshot()
			if s.State != breaker.Open || s.ConsecutiveFailures != 2 {
				t.Fatalf("snapshot %+v, want open with 2 failures", s)
			}
			if tc.name != "Do cut by its deadline" && !s.LastFailure.Equal(start) {
				t.Fatalf("LastFailure %v, want the calls' start %v", s.LastFailure, start)
			}
			if tc.name == "Do cut by its deadline" && !s.LastFailure.Equal(start.Add(20*time.Second)) {
				t.Fatalf("LastFailure %v, want the second call's start %v", s.LastFailure, start.Add(20*time.Second))
			}
			if st := f.r.Stats("a"); st.Calls != 2 || st.Failures != 2 || st.MaxDuration < 20*time.Second {
				t.Fatalf("stats %+v, want 2 failed calls of at least 20s", st)
			}
			// The cooldown (30s) counted from the last start has passed (the
			// Do case: 10s from now): the probe.
			if tc.name == "Do cut by its deadline" {
				f.clock.Advance(10 * time.Second)
			}
			if p, err := f.r.Allow("a"); err != nil || !p.IsProbe() {
				t.Fatalf("Allow after a trip dated in the past: %v probe=%v", err, p.IsProbe())
			}
		})
	}
}
