package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestLeaseTable: nothing wedges (docs/SEMANTICS.md §9.3 rule 8). An attempt
// not settled within its lease is released the next time the pool is
// touched: its slot frees, its wait stops counting, and it is a failure of
// its member dated at the lease's end, with a Penalty sample.
func TestLeaseTable(t *testing.T) {
	const attemptTimeout = time.Minute
	rows := []struct {
		name      string
		probe     bool
		touch     time.Duration // when the pool is touched after the choice
		released  bool
		leaseEnd  time.Duration // after the choice
		lateVerb  string        // a settlement after the touch ("" none)
		wantFails int           // the member breaker's consecutive failures at the end
	}{
		{name: "an attempt within its lease stays in flight", touch: attemptTimeout - 1, released: false},
		{name: "an attempt past AttemptTimeout is released as a failure dated at the lease's end",
			touch: attemptTimeout + 5*time.Second, released: true, leaseEnd: attemptTimeout, wantFails: 1},
		{name: "a probe's lease is its breaker's ProbeTimeout", probe: true,
			touch: 20 * time.Second, released: true, leaseEnd: 15 * time.Second, wantFails: 4},
		{name: "a settlement after the release changes nothing",
			touch: attemptTimeout + time.Second, released: true, leaseEnd: attemptTimeout, lateVerb: "fail", wantFails: 1},
		{name: "a late success after the release changes nothing either",
			touch: attemptTimeout + time.Second, released: true, leaseEnd: attemptTimeout, lateVerb: "ok", wantFails: 1},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(2), func(s *pool.Settings, bs []breaker.Settings) {
				s.AttemptTimeout = attemptTimeout
				bs[0].ProbeTimeout = 15 * time.Second
			})
			if row.probe {
				f.trip(t, 0)
				f.c.Advance(30 * time.Second)
			}
			start := f.c.Now()
			var r pool.Request
			a := f.choose(t, &r, pool.Need{CanServe: only(0)})
			if a.IsProbe() != row.probe {
				t.Fatalf("IsProbe = %v, want %v", a.IsProbe(), row.probe)
			}
			if want := start.Add(map[bool]time.Duration{true: 15 * time.Second, false: attemptTimeout}[row.probe]); !a.Deadline().Equal(want) {
				t.Fatalf("Deadline = %v, want %v", a.Deadline(), want)
			}
			now := f.c.Advance(row.touch)
			var q pool.Request
			f.p.Choose(now, &q, pool.Need{CanServe: only(1)}) // a touch
			st := f.p.Status(now, 0)
			if got := st.InFlight == 0; got != row.released {
				t.Fatalf("released = %v (in flight %d), want %v", got, st.InFlight, row.released)
			}
			if !row.released {
				return
			}
			if !st.Breaker.LastFailure.Equal(start.Add(row.leaseEnd)) {
				t.Errorf("last failure at %v, want the lease's end %v", st.Breaker.LastFailure.Sub(start), row.leaseEnd)
			}
			if st.Whole != 30*time.Second {
				t.Errorf("whole estimate = %v, want the Penalty", st.Whole)
			}
			if row.lateVerb != "" {
				settleAs(a, now, row.lateVerb, row.touch)
			}
			if got := f.bs[0].Snapshot().ConsecutiveFailures; got != row.wantFails {
				t.Errorf("consecutive failures = %d, want %d", got, row.wantFails)
			}
		})
	}
}

// TestHedge: a hedge never takes a probe, and its loser is settled as §7.4
// says: a failure after it waited at least the hedge delay, else a cancel.
func TestHedge(t *testing.T) {
	t.Run("a hedge chooses among the others, never a due probe", func(t *testing.T) {
		f := newFixture(t, equal(3), nil)
		f.trip(t, 1)
		f.c.Advance(30 * time.Second)
		var r pool.Request
		first := f.choose(t, &r, pool.Need{CanServe: only(0)})
		h, err := f.p.Hedge(f.c.Now(), &r, pool.Need{})
		if err != nil || h.Member() != 2 || h.IsProbe() {
			t.Fatalf("Hedge = m%d probe %v, %v; want m2, no probe", h.Member(), h.IsProbe(), err)
		}
		first.Cancel(f.c.Now())
		h.Cancel(f.c.Now())
	})
	for _, row := range []struct {
		name   string
		waited time.Duration
		fails  int
	}{
		{name: "a loser that waited at least the delay fails its member", waited: 500 * time.Millisecond, fails: 1},
		{name: "a loser that waited less is cancelled", waited: 499 * time.Millisecond, fails: 0},
	} {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(2), nil)
			var r pool.Request
			loser := f.choose(t, &r, pool.Need{CanServe: only(0)})
			winner, err := f.p.Hedge(f.c.Now(), &r, pool.Need{})
			if err != nil {
				t.Fatal(err)
			}
			now := f.c.Advance(row.waited)
			winner.FirstContent(now)
			loser.Lose(now, 500*time.Millisecond)
			winner.Success(now)
			if got := f.bs[0].Snapshot().ConsecutiveFailures; got != row.fails {
				t.Fatalf("loser's failures = %d, want %d", got, row.fails)
			}
			if res := f.p.End(now, &r); res.Outcome != pool.Served || res.Tried != 2 {
				t.Fatalf("End = %+v, want Served after 2", res)
			}
		})
	}
}
