package fallback

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsInvalidSettings(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Settings
		want []string // every problem must be named
	}{
		{"empty primary", Settings{}, []string{"fallback: Primary must not be empty"}},
		{"blank primary", Settings{Primary: " \t"}, []string{`fallback: Primary " \t" is blank`}},
		{"blank entry", Settings{Primary: "a", Chain: []string{"b", " "}}, []string{`fallback: Chain[1] " " is blank`}},
		{"empty entry", Settings{Primary: "a", Chain: []string{""}}, []string{`fallback: Chain[0] "" is blank`}},
		{"duplicate", Settings{Primary: "a", Chain: []string{"x", "gpt-b", "gpt-b"}}, []string{`fallback: Chain[2] "gpt-b" duplicates Chain[1]`}},
		{"primary in chain", Settings{Primary: "a", Chain: []string{"b", "a"}}, []string{`fallback: Chain[1] "a" is the primary`}},
		{"TripThreshold", Settings{Primary: "a", TripThreshold: -1}, []string{"fallback: TripThreshold must not be negative (got -1)"}},
		{"RecoveryTimeout", Settings{Primary: "a", RecoveryTimeout: -time.Second}, []string{"fallback: RecoveryTimeout must not be negative (got -1s)"}},
		{"RecoverySuccessesNeeded", Settings{Primary: "a", RecoverySuccessesNeeded: -2}, []string{"fallback: RecoverySuccessesNeeded must not be negative (got -2)"}},
		{"MaxFailCount", Settings{Primary: "a", MaxFailCount: -3}, []string{"fallback: MaxFailCount must not be negative (got -3)"}},
		{"ProbeTimeout", Settings{Primary: "a", ProbeTimeout: -time.Minute}, []string{"fallback: ProbeTimeout must not be negative (got -1m0s)"}},
		{"several", Settings{Primary: "", Chain: []string{"b", "b"}, MaxFailCount: -1}, []string{
			"Primary must not be empty", `Chain[1] "b" duplicates Chain[0]`, "MaxFailCount must not be negative",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := New(c.s)
			if err == nil || m != nil {
				t.Fatalf("New(%+v) = %v, %v; want an error", c.s, m, err)
			}
			if !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("error %v does not match ErrInvalidSettings", err)
			}
			var se *SettingsError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *SettingsError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "fallback: "); n != len(c.want) {
				t.Errorf("error %q names %d problems, want %d", err, n, len(c.want))
			}
		})
	}
}

func TestZeroSettingsMeanDefaults(t *testing.T) {
	m, err := New(Settings{Primary: "a", Chain: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		primary: "a", models: []string{"b"}, tripThreshold: 3, successesNeeded: 2,
		maxFail: 2, recoveryTimeout: 60 * time.Second, probeTimeout: 5 * time.Minute,
	}
	got := m.cfg
	if got.primary != want.primary || got.tripThreshold != want.tripThreshold ||
		got.successesNeeded != want.successesNeeded || got.maxFail != want.maxFail ||
		got.recoveryTimeout != want.recoveryTimeout || got.probeTimeout != want.probeTimeout ||
		len(got.models) != 1 || got.models[0] != "b" {
		t.Fatalf("config %+v, want %+v", got, want)
	}
	if m.State() != Primary || m.ActiveModel() != "a" || m.FallbackActivated() {
		t.Fatal("a new manager is not in Primary")
	}
}

func TestNamesNeedNotBeTrimmed(t *testing.T) {
	// Only blank names are errors; other names are used as given.
	if _, err := New(Settings{Primary: " a", Chain: []string{"a", "a "}}); err != nil {
		t.Fatal(err)
	}
}
