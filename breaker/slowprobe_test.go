package breaker

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// TestSlowProbeTable has one row per clause of docs/SEMANTICS.md §9.2 for the
// tool breaker ("9.2 slow probe" table), named after the row.
func TestSlowProbeTable(t *testing.T) {
	slowAfter := func(s *Settings) { s.SlowCallAfter = time.Second } // SlowCallRate is not needed
	tests := []struct {
		name string
		mod  func(*Settings)
		run  func(f *fixture)
	}{
		{"a probe whose first content came after SlowCallAfter re-opens HalfOpen at once: n + 1, dated now", slowAfter, func(f *fixture) {
			f.trip()
			p := f.nextProbe()
			f.takeEvents()
			f.clock.Advance(1500 * time.Millisecond)
			p.SuccessAfter(1500 * time.Millisecond)
			f.want(Open, 4, f.now(), zeroTime)
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
			f.wantEvents("search:half-open->open")
		}},
		{"a probe on time (first content at SlowCallAfter) closes", slowAfter, func(f *fixture) {
			f.trip()
			f.nextProbe().SuccessAfter(time.Second)
			f.want(Closed, 0, f.now().Add(-backoffBase), zeroTime)
		}},
		{"a probe settled by Success (no time to first content) closes", slowAfter, func(f *fixture) {
			f.trip()
			f.nextProbe().Success()
			f.want(Closed, 0, f.now().Add(-backoffBase), zeroTime)
		}},
		{"a slow probe is served: Do returns its answer and the breaker re-opens", slowAfter, func(f *fixture) {
			f.trip()
			f.clock.Advance(backoffBase)
			v, err := Do(context.Background(), f.b, func(context.Context) (int, error) {
				f.clock.Advance(2 * time.Second) // the probe's whole answer, late
				return 42, nil
			})
			if v != 42 || err != nil {
				t.Fatalf("Do = %v, %v; want the slow probe's answer", v, err)
			}
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"a probe is slow with SlowCallRate set too, whatever the window", func(s *Settings) {
			s.SlowCallAfter, s.SlowCallRate, s.RateMinCalls = time.Second, 0.5, 100
		}, func(f *fixture) {
			f.trip()
			f.nextProbe().SuccessAfter(time.Hour)
			f.wantOpen(2, f.now().Add(2*backoffBase), CauseBackoff)
		}},
		{"SlowCallAfter zero: a slow probe closes", nil, func(f *fixture) {
			f.trip()
			f.nextProbe().SuccessAfter(time.Hour)
			f.want(Closed, 0, f.now().Add(-backoffBase), zeroTime)
		}},
		{"Closed: a slow success stays a success (it zeroes the count) and trips nothing without SlowCallRate", slowAfter, func(f *fixture) {
			f.fail(2)
			f.allow().SuccessAfter(time.Hour)
			f.want(Closed, 0, f.now(), zeroTime)
			for range 50 {
				f.allow().SuccessAfter(time.Hour)
			}
			f.want(Closed, 0, f.now(), zeroTime)
		}},
		{"a straggler's slow success while HalfOpen is ignored", slowAfter, func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.nextProbe()
			straggler.SuccessAfter(time.Hour)
			if st := f.b.State(); st != HalfOpen {
				t.Fatalf("state %v, want half-open: only the probe's verdict acts", st)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(backoffFixture(t, tc.mod)) })
	}
}

// TestBackoffSettings: the §9.1 and §9.3.1 settings' validation names the
// field; every accepted value is accepted by New and Reconfigure alike.
func TestBackoffSettings(t *testing.T) {
	bad := []struct {
		field string
		s     Settings
	}{
		{"RecoveryBackoff", Settings{RecoveryBackoff: math.NaN()}},
		{"RecoveryBackoff", Settings{RecoveryBackoff: math.Inf(1)}},
		{"RecoveryBackoff", Settings{RecoveryBackoff: math.Inf(-1)}},
		{"RecoveryBackoff", Settings{RecoveryBackoff: 0.5}},
		{"RecoveryBackoff", Settings{RecoveryBackoff: -2}},
		{"MaxRecoveryTimeout", Settings{MaxRecoveryTimeout: -time.Second}},
		{"MaxRecoveryTimeout", Settings{MaxRecoveryTimeout: 29 * time.Second}}, // below the default 30s base
		{"MaxRecoveryTimeout", Settings{RecoveryDuration: time.Minute, MaxRecoveryTimeout: 59 * time.Second}},
		{"QuotaCooldown", Settings{QuotaCooldown: -1}},
	}
	for _, tc := range bad {
		_, err := New(tc.s)
		var se *SettingsError
		if !errors.As(err, &se) || se.Field != tc.field || !errors.Is(err, ErrInvalidSettings) {
			t.Errorf("New(%+v) = %v; want a *SettingsError naming %s", tc.s, err, tc.field)
		}
	}
	for _, s := range []Settings{
		{RecoveryBackoff: 1}, {RecoveryBackoff: 1.5}, {RecoveryBackoff: 1e6},
		{MaxRecoveryTimeout: 30 * time.Second}, {RecoveryDuration: time.Second, MaxRecoveryTimeout: time.Second},
		{QuotaCooldown: time.Second},
	} {
		b, err := New(s)
		if err != nil {
			t.Errorf("New(%+v) = %v, want it accepted", s, err)
			continue
		}
		if err := b.Reconfigure(s); err != nil {
			t.Errorf("Reconfigure(%+v) = %v, want it accepted", s, err)
		}
	}
}
