package breaker

import (
	"math"
	"testing"
	"time"
)

// The numbers of SEMANTICS §9.1's example: f = 2, base 5s, cap 50s.
const (
	backoffBase = 5 * time.Second
	backoffCap  = 50 * time.Second
)

// backoffFixture is a fixture with the backoff of §9.1's example (threshold
// 3, lease 10s), changed further by mod.
func backoffFixture(t *testing.T, mod func(*Settings)) *fixture {
	t.Helper()
	return newFixtureWith(t, func(s *Settings) {
		s.RecoveryDuration, s.MaxRecoveryTimeout, s.RecoveryBackoff = backoffBase, backoffCap, 2
		if mod != nil {
			mod(s)
		}
	})
}

// wantOpen checks an open breaker's §9 fields: Trips n, OpenUntil until and
// Cause c, and that the gate refuses until then and no later.
func (f *fixture) wantOpen(n int, until time.Time, c Cause) {
	f.t.Helper()
	s := f.b.Snapshot()
	if s.State != Open || s.Trips != n || !s.OpenUntil.Equal(until) || s.Cause != c {
		f.t.Fatalf("snapshot %+v\nwant open, Trips %d, OpenUntil %v, Cause %v", s, n, until, c)
	}
	if d := until.Sub(f.now()); d > 0 && f.b.RetryIn() != time.Duration(roundUpMillis(int64(d))) {
		f.t.Fatalf("RetryIn %v, want %v (until OpenUntil)", f.b.RetryIn(), d)
	}
}

// wantTrips checks Snapshot.Trips in any state.
func (f *fixture) wantTrips(n int) {
	f.t.Helper()
	if s := f.b.Snapshot(); s.Trips != n {
		f.t.Fatalf("Trips %d, want %d (snapshot %+v)", s.Trips, n, s)
	}
}

// nextProbe waits out the cooldown in force, checking that the gate refuses
// a nanosecond before its end, and takes the probe.
func (f *fixture) nextProbe() Permit {
	f.t.Helper()
	until := f.b.Snapshot().OpenUntil
	f.clock.Advance(until.Sub(f.now()) - time.Nanosecond)
	f.refuse()
	f.clock.Advance(time.Nanosecond)
	p := f.allow()
	if !p.IsProbe() {
		f.t.Fatal("the first gate call at OpenUntil is not the probe")
	}
	return p
}

// TestBackoffTable has one row per clause of docs/SEMANTICS.md §9.1 for the
// tool breaker ("9.1 backoff" table), named after the row.
func TestBackoffTable(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Settings)
		run  func(f *fixture)
	}{
		{"n/a trip from Closed raises n", nil, func(f *fixture) {
			f.trip()
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"n/a failed probe re-trips: n + 1", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().Failure()
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"n/a lapsed probe lease re-trips: n + 1, pure reads first", nil, func(f *fixture) {
			f.trip()
			f.nextProbe()
			f.clock.Advance(testLease)
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff) // pure: nothing applied yet
			f.refuse()
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"n/a straggler's failure while HalfOpen re-trips: n + 1", nil, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.nextProbe()
			straggler.Failure()
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"n/a refusal, failure while Open and cancel leave n", nil, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.refuse()
			f.clock.Advance(time.Second)
			straggler.Failure()
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
			f.nextProbe().Cancel()
			f.wantTrips(1)
		}},
		{"n/a kept and reported with the backoff off", func(s *Settings) { s.RecoveryBackoff = 0 }, func(f *fixture) {
			f.trip()
			f.nextProbe().Failure()
			f.nextProbe().Failure()
			f.wantOpen(3, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"c(n)/a brownout that re-trips on every probe waits 5, 10, 20, 40, 50, 50 s", nil, func(f *fixture) {
			f.trip()
			for n, want := range []time.Duration{5, 10, 20, 40, 50, 50, 50} {
				f.wantOpen(n+1, f.now().Add(want*time.Second), map[bool]Cause{false: CauseRecoveryTimeout, true: CauseBackoff}[n > 0])
				f.nextProbe().Failure()
			}
		}},
		{"c(n)/a brownout that re-trips each time it closes waits 5, 10, 20 s", nil, func(f *fixture) {
			for n, want := range []time.Duration{5, 10, 20} {
				f.trip()
				f.wantOpen(n+1, f.now().Add(want*time.Second), map[bool]Cause{false: CauseRecoveryTimeout, true: CauseBackoff}[n > 0])
				f.nextProbe().Success()
				f.wantTrips(n + 1) // closed: n is kept until MaxRecoveryTimeout has passed
			}
		}},
		{"c(n)/a lapsed lease waits c(n) from the lease's end", nil, func(f *fixture) {
			f.trip()
			f.nextProbe()
			leaseEnd := f.now().Add(testLease)
			f.clock.Advance(testLease + time.Second)
			f.wantOpen(2, leaseEnd.Add(2*backoffBase), CauseBackoff)
		}},
		{"c(n)/a failure while Open restarts the wait with c(n)", nil, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.nextProbe().Failure() // n = 2, 10s
			f.clock.Advance(3 * time.Second)
			straggler.Failure()
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"c(n)/saturates without overflow for any n", func(s *Settings) {
			s.RecoveryDuration, s.MaxRecoveryTimeout, s.RecoveryBackoff = time.Hour, math.MaxInt64, 1e300
		}, func(f *fixture) {
			k := f.b.back
			if c := k.cooldown(f.b.recovery, 2); c != math.MaxInt64 {
				t.Fatalf("c(2) = %v, want the cap (MaxInt64)", time.Duration(c))
			}
			if c := k.cooldown(f.b.recovery, math.MaxInt32); c != math.MaxInt64 {
				t.Fatalf("c(MaxInt32) = %v, want the cap", time.Duration(c))
			}
			f.trip()
			f.nextProbe().Failure()
			if s := f.b.Snapshot(); s.State != Open || s.Trips != 2 || f.b.WouldAllow() {
				t.Fatalf("snapshot %+v: want open for good, n = 2", s)
			}
		}},
		{"reset/n restarts at 1 for a trip MaxRecoveryTimeout after the breaker closed", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().Failure()
			f.nextProbe().Success()
			f.wantTrips(2)
			f.clock.Advance(backoffCap - time.Nanosecond)
			f.wantTrips(2)
			f.clock.Advance(time.Nanosecond)
			f.wantTrips(0) // pure reads report 0 once that much time has passed
			f.trip()
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"reset/a trip sooner continues n", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().Success()
			f.clock.Advance(backoffCap - time.Nanosecond)
			f.trip()
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"reset/a re-trip from HalfOpen never resets n (the breaker has not closed since)", nil, func(f *fixture) {
			f.trip()
			for range 6 { // 5+10+20+40+50+50 s open: longer than MaxRecoveryTimeout
				f.nextProbe().Failure()
			}
			f.wantOpen(7, f.now().Add(backoffCap), CauseBackoff)
		}},
		{"reset/Reset sets n to 0 and closedAt to now", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().Failure()
			f.b.Reset()
			f.wantTrips(0)
			f.trip()
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"reset/MaxRecoveryTimeout defaults to 10 × RecoveryDuration and is the reset window with the backoff off",
			func(s *Settings) { s.MaxRecoveryTimeout, s.RecoveryBackoff = 0, 0 }, func(f *fixture) {
				f.trip()
				f.nextProbe().Success()
				f.clock.Advance(10*backoffBase - time.Nanosecond)
				f.wantTrips(1)
				f.clock.Advance(time.Nanosecond)
				f.wantTrips(0)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(backoffFixture(t, tc.mod)) })
	}
}
