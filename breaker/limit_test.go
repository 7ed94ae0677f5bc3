package breaker

import (
	"testing"
	"time"
)

// TestRateLimitTable has one row per clause of docs/SEMANTICS.md §9.3 rule 1
// (the member verdicts) and of §9.1's hints ("9.3.1 member verdicts" table),
// named after the row.
func TestRateLimitTable(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Settings)
		run  func(f *fixture)
	}{
		{"RateLimited/with a hint opens Closed at once until the hint, not for RecoveryDuration", nil, func(f *fixture) {
			f.allow().RateLimited(f.now().Add(time.Second))
			f.wantOpen(0, f.now().Add(time.Second), CauseHint)
			f.want(Open, 1, f.now(), zeroTime)
			f.wantEvents("search:closed->open")
			f.nextProbe()
		}},
		{"RateLimited/with a hint opens HalfOpen (the probe's) until the hint, n unchanged", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().RateLimited(f.now().Add(2 * time.Second))
			f.wantOpen(1, f.now().Add(2*time.Second), CauseHint)
		}},
		{"RateLimited/while Open: a later hint wins over c(n)", nil, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.nextProbe().Failure() // n = 2: 10s
			straggler.RateLimited(f.now().Add(time.Minute))
			f.wantOpen(2, f.now().Add(time.Minute), CauseHint)
		}},
		{"RateLimited/while Open: an earlier hint does not shorten the cooldown in force", nil, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.nextProbe().Failure()
			straggler.RateLimited(f.now().Add(time.Second))
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"RateLimited/a zero hint is a plain failure", nil, func(f *fixture) {
			f.allow().RateLimited(time.Time{})
			f.want(Closed, 1, f.now(), zeroTime)
			f.allow().RateLimited(time.Time{})
			f.allow().RateLimited(time.Time{})
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout) // a trip: n + 1
		}},
		{"RateLimited/the opening by a hint leaves n; the probe after it re-trips with c(n + 1)", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().Success()
			f.allow().RateLimited(f.now().Add(time.Second))
			f.wantOpen(1, f.now().Add(time.Second), CauseHint)
			f.nextProbe().Failure()
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"RateLimited/is never stale: the provider's answer speaks of now", nil, func(f *fixture) {
			old := f.allow()
			f.allow().Failure()
			f.allow().Success() // a counted success of a later call
			old.RateLimited(f.now().Add(time.Second))
			f.wantOpen(0, f.now().Add(time.Second), CauseHint)
		}},
		{"QuotaExhausted/with a hint opens at once until the hint", nil, func(f *fixture) {
			f.allow().QuotaExhausted(f.now().Add(time.Hour))
			f.wantOpen(0, f.now().Add(time.Hour), CauseQuota)
		}},
		{"QuotaExhausted/without a hint opens for QuotaCooldown (0: 10 min)", nil, func(f *fixture) {
			f.allow().QuotaExhausted(time.Time{})
			f.wantOpen(0, f.now().Add(DefaultQuotaCooldown), CauseQuota)
		}},
		{"QuotaExhausted/without a hint: QuotaCooldown as set", func(s *Settings) { s.QuotaCooldown = time.Minute }, func(f *fixture) {
			f.trip()
			f.nextProbe().QuotaExhausted(time.Time{})
			f.wantOpen(1, f.now().Add(time.Minute), CauseQuota)
		}},
		{"QuotaExhausted/never before the cooldown in force", func(s *Settings) { s.QuotaCooldown = time.Second }, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			straggler.QuotaExhausted(time.Time{})
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"hint/a failure while Open after a hint opening restarts c(n) if later", nil, func(f *fixture) {
			straggler := f.allow()
			f.allow().RateLimited(f.now().Add(time.Second))
			straggler.Failure()
			f.wantOpen(0, f.now().Add(backoffBase), CauseRecoveryTimeout) // n = 0 waits the base
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(backoffFixture(t, tc.mod)) })
	}
}

// TestReconfigure has one row per clause of Reconfigure (§9.1: it keeps n;
// GATEWAY §11.5: in place, keeping the state).
func TestReconfigure(t *testing.T) {
	base := func(f *fixture) Settings {
		return Settings{Name: "search", FailureThreshold: 3, RecoveryDuration: backoffBase, ProbeTimeout: testLease,
			MaxRecoveryTimeout: backoffCap, RecoveryBackoff: 2, Now: f.clock.Now}
	}
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"keeps the state, the count, n and the running cooldown; the new factor applies from the next opening", func(f *fixture) {
			f.trip()
			f.nextProbe().Failure() // n = 2, 10s
			until := f.b.Snapshot().OpenUntil
			s := base(f)
			s.RecoveryBackoff = 3
			if err := f.b.Reconfigure(s); err != nil {
				t.Fatal(err)
			}
			f.wantOpen(2, until, CauseBackoff)
			f.want(Open, 4, f.now(), zeroTime)
			f.nextProbe().Failure()
			f.wantOpen(3, f.now().Add(9*backoffBase), CauseBackoff)
		}},
		{"a new threshold applies at the next failure", func(f *fixture) {
			f.fail(2)
			s := base(f)
			s.FailureThreshold = 5
			if err := f.b.Reconfigure(s); err != nil {
				t.Fatal(err)
			}
			f.fail(2)
			f.want(Closed, 4, f.now(), zeroTime)
			f.fail(1)
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"a probe in flight keeps the lease it was granted; the next probe gets the new ProbeTimeout", func(f *fixture) {
			f.trip()
			p := f.nextProbe()
			s := base(f)
			s.ProbeTimeout = time.Second
			if err := f.b.Reconfigure(s); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(time.Second)
			p.Success() // within its 10s lease: it closes
			f.want(Closed, 0, f.now().Add(-time.Second-backoffBase), zeroTime)
			f.trip()
			f.nextProbe()
			f.clock.Advance(time.Second)
			f.wantOpen(3, f.now().Add(4*backoffBase), CauseBackoff) // the new 1s lease lapsed: n = 3
		}},
		{"a changed window starts empty; an unchanged one keeps its counts", func(f *fixture) {
			s := base(f)
			s.FailureRate, s.RateMinCalls = 0.5, 4
			if err := f.b.Reconfigure(s); err != nil {
				t.Fatal(err)
			}
			f.allow().Success()
			f.allow().Failure()
			if err := f.b.Reconfigure(s); err != nil { // the same window
				t.Fatal(err)
			}
			f.allow().Success()
			f.allow().Failure() // 2 of 4
			f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
		}},
		{"invalid settings are an error and change nothing", func(f *fixture) {
			f.trip()
			before := f.b.Snapshot()
			s := base(f)
			s.RecoveryBackoff = 0.5
			if err := f.b.Reconfigure(s); err == nil {
				t.Fatal("Reconfigure accepted RecoveryBackoff 0.5")
			}
			if after := f.b.Snapshot(); after != before {
				t.Fatalf("a refused Reconfigure changed %+v into %+v", before, after)
			}
		}},
		{"another Name is an error naming the field", func(f *fixture) {
			s := base(f)
			s.Name = "fetch"
			err := f.b.Reconfigure(s)
			if se, ok := err.(*SettingsError); !ok || se.Field != "Name" {
				t.Fatalf("err = %v, want a *SettingsError for Name", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(backoffFixture(t, nil)) })
	}
}
