package breaker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

func TestStateText(t *testing.T) {
	for _, s := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
		b, err := s.MarshalText()
		if err != nil || string(b) != s.String() {
			t.Fatalf("%v.MarshalText() = %q, %v; want %q", s, b, err, s.String())
		}
		var got breaker.State
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", b, got, err, s)
		}
	}
	for _, bad := range []string{"", "Closed", "halfopen", "3"} {
		var s breaker.State
		if err := s.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) = nil error, want one", bad)
		}
	}
	if _, err := breaker.State(7).MarshalText(); err == nil {
		t.Error("State(7).MarshalText() = nil error, want one")
	}
}

func TestCauseText(t *testing.T) {
	want := map[breaker.Cause]string{breaker.CauseRecoveryTimeout: "recovery_timeout", breaker.CauseBackoff: "backoff",
		breaker.CauseHint: "hint", breaker.CauseQuota: "quota", breaker.CauseManual: "manual"}
	for c, text := range want {
		b, err := c.MarshalText()
		if err != nil || string(b) != text || c.String() != text {
			t.Fatalf("%d.MarshalText() = %q, %v, String %q; want %q", int(c), b, err, c.String(), text)
		}
		var got breaker.Cause
		if err := got.UnmarshalText(b); err != nil || got != c {
			t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", b, got, err, c)
		}
	}
	var c breaker.Cause
	if err := c.UnmarshalText([]byte("cooldown")); err == nil || !strings.Contains(err.Error(), "recovery_timeout, backoff, hint, quota or manual") {
		t.Fatalf("unknown cause: err = %v", err)
	}
	if _, err := breaker.Cause(9).MarshalText(); err == nil {
		t.Error("Cause(9).MarshalText() = nil error, want one")
	}
}

func TestSnapshotJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 17, 0, 0, 500, time.UTC)
	tests := []struct {
		name string
		s    breaker.Snapshot
		want string
	}{
		{"zero", breaker.Snapshot{}, `{"state":"closed","consecutive_failures":0}`},
		{"open", breaker.Snapshot{State: breaker.Open, ConsecutiveFailures: 3, LastFailure: at, Trips: 1, OpenUntil: at.Add(30 * time.Second)},
			`{"state":"open","consecutive_failures":3,"last_failure":"2026-11-30T17:00:00.0000005Z","trips":1,"open_until":"2026-11-30T17:00:30.0000005Z","cause":"recovery_timeout"}`},
		{"backed off", breaker.Snapshot{State: breaker.Open, ConsecutiveFailures: 5, LastFailure: at, Trips: 3, OpenUntil: at.Add(2 * time.Minute), Cause: breaker.CauseBackoff},
			`{"state":"open","consecutive_failures":5,"last_failure":"2026-11-30T17:00:00.0000005Z","trips":3,"open_until":"2026-11-30T17:02:00.0000005Z","cause":"backoff"}`},
		{"probing", breaker.Snapshot{State: breaker.HalfOpen, ConsecutiveFailures: 3, LastFailure: at, ProbeStartedAt: at.Add(time.Minute), Trips: 2},
			`{"state":"half-open","consecutive_failures":3,"last_failure":"2026-11-30T17:00:00.0000005Z","probe_started_at":"2026-11-30T17:01:00.0000005Z","trips":2}`},
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
			var got breaker.Snapshot
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got != tt.s {
				t.Fatalf("round trip = %+v, want %+v", got, tt.s)
			}
		})
	}
	var s breaker.Snapshot
	if err := json.Unmarshal([]byte(`{"state":"ajar"}`), &s); err == nil || !strings.Contains(err.Error(), "ajar") {
		t.Fatalf("unknown state: err = %v", err)
	}
}
