package fallback_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

func TestStateKindText(t *testing.T) {
	for _, s := range []fallback.State{fallback.Primary, fallback.Fallback, fallback.Recovering} {
		b, err := s.MarshalText()
		if err != nil || string(b) != s.String() {
			t.Fatalf("%v.MarshalText() = %q, %v", s, b, err)
		}
		var got fallback.State
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Fatalf("UnmarshalText(%q) = %v, %v", b, got, err)
		}
	}
	for _, k := range []fallback.Kind{fallback.Transient, fallback.RateLimit, fallback.Quota} {
		b, err := k.MarshalText()
		if err != nil || string(b) != k.String() {
			t.Fatalf("%v.MarshalText() = %q, %v", k, b, err)
		}
		var got fallback.Kind
		if err := got.UnmarshalText(b); err != nil || got != k {
			t.Fatalf("UnmarshalText(%q) = %v, %v", b, got, err)
		}
	}
	var s fallback.State
	var k fallback.Kind
	for _, bad := range []string{"", "Primary", "open"} {
		if s.UnmarshalText([]byte(bad)) == nil || k.UnmarshalText([]byte(bad)) == nil {
			t.Errorf("UnmarshalText(%q) = nil error", bad)
		}
	}
	if _, err := fallback.State(3).MarshalText(); err == nil {
		t.Error("State(3).MarshalText() = nil error")
	}
	if _, err := fallback.Kind(3).MarshalText(); err == nil {
		t.Error("Kind(3).MarshalText() = nil error")
	}
	for c, want := range []string{"recovery_timeout", "hint", "quota", "manual", "backoff"} {
		b, err := fallback.Cause(c).MarshalText()
		if err != nil || string(b) != want || fallback.Cause(c).String() != want {
			t.Fatalf("Cause(%d).MarshalText() = %q, %v", c, b, err)
		}
		var got fallback.Cause
		if err := got.UnmarshalText(b); err != nil || got != fallback.Cause(c) {
			t.Fatalf("UnmarshalText(%q) = %v, %v", b, got, err)
		}
	}
	var c fallback.Cause
	if c.UnmarshalText([]byte("recovery-timeout")) == nil {
		t.Error(`Cause.UnmarshalText("recovery-timeout") = nil error`)
	}
	if _, err := fallback.Cause(5).MarshalText(); err == nil || fallback.Cause(5).String() != "Cause(5)" {
		t.Error("Cause(5).MarshalText() = nil error")
	}
}

func TestSnapshotJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		s    fallback.Snapshot
		want string
	}{
		{"fresh", fallback.Snapshot{Chain: []fallback.Entry{}},
			`{"state":"primary","consecutive_failures":0,"probe_successes":0,"fallback_activated":false,"chain":[]}`},
		{"tripped", fallback.Snapshot{State: fallback.Fallback, TrippedAt: at, FallbackActivated: true,
			Chain: []fallback.Entry{{Model: "b", Attempts: 2, Available: true, Failed: true}, {Model: "c", Available: false, Failed: true}}},
			`{"state":"fallback","consecutive_failures":0,"probe_successes":0,"tripped_at":"2026-11-30T17:00:00Z","fallback_activated":true,` +
				`"chain":[{"model":"b","attempts":2,"available":true,"failed":true},{"model":"c","attempts":0,"available":false,"failed":true}]}`},
		{"probing", fallback.Snapshot{State: fallback.Recovering, ConsecutiveFailures: 1, ProbeSuccesses: 1, TrippedAt: at,
			FallbackActivated: true, Chain: []fallback.Entry{{Model: "b", Available: true}}, ProbeStartedAt: at.Add(time.Minute)},
			`{"state":"recovering","consecutive_failures":1,"probe_successes":1,"tripped_at":"2026-11-30T17:00:00Z","fallback_activated":true,` +
				`"chain":[{"model":"b","attempts":0,"available":true,"failed":false}],"probe_started_at":"2026-11-30T17:01:00Z"}`},
		{"quota", fallback.Snapshot{State: fallback.Fallback, TrippedAt: at, FallbackActivated: true, Chain: []fallback.Entry{},
			CooldownEnds: at.Add(10 * time.Minute), CooldownCause: fallback.CauseQuota},
			`{"state":"fallback","consecutive_failures":0,"probe_successes":0,"tripped_at":"2026-11-30T17:00:00Z","fallback_activated":true,` +
				`"chain":[],"cooldown_ends":"2026-11-30T17:10:00Z","cooldown_cause":"quota"}`},
		{"timeout", fallback.Snapshot{State: fallback.Fallback, TrippedAt: at, FallbackActivated: true, Chain: []fallback.Entry{},
			CooldownEnds: at.Add(time.Minute)},
			`{"state":"fallback","consecutive_failures":0,"probe_successes":0,"tripped_at":"2026-11-30T17:00:00Z","fallback_activated":true,` +
				`"chain":[],"cooldown_ends":"2026-11-30T17:01:00Z","cooldown_cause":"recovery_timeout"}`},
		{"held, entry disabled", fallback.Snapshot{State: fallback.Fallback, TrippedAt: at, FallbackActivated: true,
			Chain:        []fallback.Entry{{Model: "b", Failed: true, DisabledUntil: at.Add(time.Hour), DisabledReason: "flaky"}},
			CooldownEnds: at.Add(10 * time.Minute), CooldownCause: fallback.CauseManual, HoldUntil: at.Add(10 * time.Minute), HoldReason: "INC-42"},
			`{"state":"fallback","consecutive_failures":0,"probe_successes":0,"tripped_at":"2026-11-30T17:00:00Z","fallback_activated":true,` +
				`"chain":[{"model":"b","attempts":0,"available":false,"failed":true,"disabled_until":"2026-11-30T18:00:00Z","disabled_reason":"flaky"}],` +
				`"cooldown_ends":"2026-11-30T17:10:00Z","cooldown_cause":"manual","hold_until":"2026-11-30T17:10:00Z","hold_reason":"INC-42"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("Marshal = %s\nwant      %s", b, tt.want)
			}
			var got fallback.Snapshot
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.s) {
				t.Fatalf("round trip = %+v, want %+v", got, tt.s)
			}
		})
	}
}

func TestTransitionJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	for _, tr := range []fallback.Transition{
		{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b", At: at},
		{From: fallback.Fallback, To: fallback.Fallback, FromModel: "b"},
	} {
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		var got fallback.Transition
		if err := json.Unmarshal(b, &got); err != nil || got != tr {
			t.Fatalf("round trip of %s = %+v, %v; want %+v", b, got, err, tr)
		}
	}
	b, _ := json.Marshal(fallback.Transition{From: fallback.Primary, To: fallback.Fallback, FromModel: "a", ToModel: "b", At: at})
	if want := `{"from":"primary","to":"fallback","from_model":"a","to_model":"b","at":"2026-11-30T17:00:00Z"}`; string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var tr fallback.Transition
	if err := json.Unmarshal([]byte(`{"from":"tripped"}`), &tr); err == nil {
		t.Error("unknown state: nil error")
	}
}

func TestManagerSnapshotJSON(t *testing.T) {
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	m, err := fallback.New(fallback.Settings{Primary: "a", Chain: []string{"b", "c"}, TripThreshold: 1, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ := m.Begin()
	turn.Failure(fallback.Transient)
	turn, _ = m.Begin()
	turn.Failure(fallback.RateLimit)
	want := m.Snapshot()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got fallback.Snapshot
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip = %+v\nwant %+v", got, want)
	}
	if got.State != fallback.Fallback || got.Chain[0].Attempts != 1 {
		t.Fatalf("snapshot = %s, want fallback with one failure on b", b)
	}
}
