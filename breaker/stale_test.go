package breaker

import (
	"testing"
	"time"
)

// TestStaleFailures has one case per situation of docs/SEMANTICS.md section 1,
// "Decision (stale failures, rev 2)": a failure of a call that started before
// a counted success's call changes nothing; every other failure is fresh.
func TestStaleFailures(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"Closed: a late failure older than a counted success changes nothing", func(f *fixture) {
			old := f.allow() // hangs
			f.fail(1)
			failed := f.now()
			f.clock.Advance(time.Second)
			f.allow().Success() // started after old: resets the count, proves the tool
			f.clock.Advance(time.Second)
			old.Failure()
			f.want(Closed, 0, failed, zeroTime)
			f.clock.Advance(time.Second)
			f.allow().Failure() // started after the success: fresh
			f.want(Closed, 1, f.now(), zeroTime)
			f.wantEvents()
		}},
		{"Closed: late failures cannot trip a breaker a newer call proved", func(f *fixture) {
			var hung []Permit
			for range 5 {
				hung = append(hung, f.allow())
			}
			f.fail(1)
			f.allow().Success()
			for _, p := range hung {
				p.Failure()
			}
			f.want(Closed, 0, t0, zeroTime)
			f.wantEvents()
		}},
		{"after a probe closed the breaker: late failures change nothing", func(f *fixture) {
			var hung []Permit
			for range 4 {
				hung = append(hung, f.allow()) // started before the outage was noticed
			}
			p := f.probe() // three fresh failures trip it; the cooldown passes
			f.clock.Advance(time.Second)
			p.Success()
			f.wantEvents("search:half-open->closed")
			for _, h := range hung {
				f.clock.Advance(time.Second)
				h.Failure()
			}
			f.want(Closed, 0, t0, zeroTime)
			f.wantEvents()
		}},
		{"Open: a late failure does not restart the cooldown", func(f *fixture) {
			hung := f.allow()
			p := f.probe()
			p.Success()
			f.trip() // fresh failures of calls that started after the probe
			tripped := f.now()
			f.clock.Advance(time.Second)
			hung.Failure()
			f.want(Open, 3, tripped, zeroTime)
			f.clock.Advance(testRecovery - time.Second)
			if p := f.allow(); !p.IsProbe() {
				t.Fatal("the cooldown did not count from the fresh trip")
			}
		}},
		{"HalfOpen: a late failure leaves the probe its slot", func(f *fixture) {
			hung := f.allow()
			f.fail(1)
			f.allow().Success()
			p := f.probe()
			probeAt := f.now()
			hung.Failure()
			f.want(HalfOpen, 3, probeAt.Add(-testRecovery), probeAt)
			f.wantEvents()
			p.Success()
			f.want(Closed, 0, probeAt.Add(-testRecovery), zeroTime)
			f.wantEvents("search:half-open->closed")
		}},
		{"the counted success whose call started latest decides, not the one counted last", func(f *fixture) {
			older, early := f.allow(), f.allow() // start together
			f.fail(1)                            // the first failure after a clean state orders later calls after it
			late := f.allow()
			late.Success() // counted: proves every call started before late
			f.allow().Failure()
			lastFailure := f.now()
			f.want(Closed, 1, lastFailure, zeroTime)
			early.Success() // counted last (it resets the count), but started before late
			older.Failure() // started before late: stale
			f.want(Closed, 0, lastFailure, zeroTime)
		}},
		{"a failure of a call that started with the success's call is fresh", func(f *fixture) {
			f.fail(1)
			a, b := f.allow(), f.allow()
			a.Success()
			b.Failure()
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"a success that reset no count proves nothing (the closed path stays free)", func(f *fixture) {
			hung := f.allow()
			f.allow().Success() // nothing to reset
			hung.Failure()
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"a late probe cut by its lease is stale once a newer probe closed the breaker", func(f *fixture) {
			p1 := f.probe()
			f.clock.Advance(testLease) // p1's lease ends: open again, dated at its end
			f.clock.Advance(testRecovery)
			p2 := f.allow()
			if !p2.IsProbe() {
				t.Fatal("no second probe")
			}
			p2.Success()
			p1.Failure()
			s := f.b.Snapshot()
			if s.State != Closed || s.ConsecutiveFailures != 0 {
				t.Fatalf("snapshot %+v, want closed with no failures", s)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(newFixture(t)) })
	}
}

// TestReset: Reset returns the breaker to Closed from every state, clears
// the counters, fires OnStateChange only if the state changed, and makes the
// verdicts of permits issued before it old news.
func TestReset(t *testing.T) {
	t.Run("from Open", func(t *testing.T) {
		f := newFixture(t)
		hung := f.allow()
		f.trip()
		f.b.Reset()
		f.want(Closed, 0, zeroTime, zeroTime)
		f.wantEvents("search:open->closed")
		hung.Failure() // started before Reset: stale
		f.want(Closed, 0, zeroTime, zeroTime)
		f.allow().Failure() // started after: counts
		f.want(Closed, 1, f.now(), zeroTime)
	})
	t.Run("from Closed with failures: no event", func(t *testing.T) {
		f := newFixture(t)
		f.fail(2)
		f.b.Reset()
		f.want(Closed, 0, zeroTime, zeroTime)
		f.wantEvents()
	})
	t.Run("from HalfOpen: the probe's verdict is old news", func(t *testing.T) {
		f := newFixture(t)
		p := f.probe()
		f.b.Reset()
		f.wantEvents("search:half-open->closed")
		if d, ok := p.Deadline(); !ok || d.IsZero() {
			t.Fatal("the probe permit lost its deadline")
		}
		p.Failure()
		f.want(Closed, 0, zeroTime, zeroTime)
		f.fail(3)
		f.clock.Advance(testRecovery)
		if q := f.allow(); !q.IsProbe() {
			t.Fatal("no probe after a fresh trip")
		}
		p.Success() // the old probe cannot close the new half-open breaker
		if st := f.b.State(); st != HalfOpen {
			t.Fatalf("state %v, want half-open", st)
		}
	})
	t.Run("a lapsed lease is reported first", func(t *testing.T) {
		f := newFixture(t)
		f.probe()
		f.clock.Advance(testLease)
		f.b.Reset()
		f.wantEvents("search:half-open->open", "search:open->closed")
		f.want(Closed, 0, zeroTime, zeroTime)
	})
}
