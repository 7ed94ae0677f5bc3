package gateway

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestConfigBackoffKeys: breaker.recovery_backoff and
// breaker.max_recovery_timeout under a model's breaker (GATEWAY §11.1,
// SEMANTICS §9.1): 0 or 1 off; a factor in (0, 1), NaN or a negative one an
// error; the cap compared with the recovery_timeout in force, explicit or
// default; each problem named by its key path.
func TestConfigBackoffKeys(t *testing.T) {
	for _, tc := range []struct {
		breaker string
		want    string // "" valid
	}{
		{`{recovery_backoff: 2, max_recovery_timeout: 50s, recovery_timeout: 5s}`, ""},
		{`{recovery_backoff: 0}`, ""},
		{`{recovery_backoff: 1}`, ""},
		{`{recovery_backoff: 1.5}`, ""},
		{`{max_recovery_timeout: 60s}`, ""}, // the default recovery_timeout: equal is fine
		{`{recovery_backoff: 0.5}`, `models[0].breaker.recovery_backoff: must be at least 1, or 0 or 1 for off (got 0.5)`},
		{`{recovery_backoff: -2}`, `models[0].breaker.recovery_backoff: must not be negative (got -2)`},
		{`{recovery_backoff: .nan}`, `models[0].breaker.recovery_backoff: ".nan" is not a number`},
		{`{recovery_backoff: .inf}`, `models[0].breaker.recovery_backoff: ".inf" is not a number`},
		{`{recovery_backoff: twice}`, `models[0].breaker.recovery_backoff: "twice" is not a number`},
		{`{max_recovery_timeout: 30s}`, `models[0].breaker.max_recovery_timeout: 30s is below recovery_timeout (1m0s in force)`},
		{`{max_recovery_timeout: 4s, recovery_timeout: 5s}`, `models[0].breaker.max_recovery_timeout: 4s is below recovery_timeout (5s in force)`},
		{`{max_recovery_timeout: 0s}`, `models[0].breaker.max_recovery_timeout: must be above zero`},
	} {
		yaml := "upstreams: [{name: u, base_url: 'http://h/v1'}]\nmodels:\n  - {name: a, primary: u/x, chain: [u/y], breaker: " + tc.breaker + "}\n"
		cfg, err := ParseConfig([]byte(yaml))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.breaker, err)
			}
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *ConfigError with %q", tc.breaker, err, tc.want)
		}
		_ = cfg
	}
	// A config built in Go meets the same checks.
	for f, want := range map[float64]string{math.NaN(): "must be a finite number (got NaN)", math.Inf(1): "must be a finite number (got +Inf)"} {
		var ps problems
		ps.backoff("models[0].breaker", Breaker{RecoveryBackoff: f})
		if len(ps) != 1 || ps[0].Path != "models[0].breaker.recovery_backoff" || ps[0].Message != want {
			t.Errorf("backoff %v: %+v, want %q", f, ps, want)
		}
	}
	cfg, err := ParseConfig([]byte("upstreams: [{name: u, base_url: 'http://h/v1'}]\nmodels:\n  - {name: a, primary: u/x, breaker: {recovery_backoff: 2, max_recovery_timeout: 50s, recovery_timeout: 5s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.Models[0].Breaker; b.RecoveryBackoff != 2 || b.MaxRecoveryTimeout != 50*time.Second {
		t.Fatalf("parsed %+v", b)
	}
}
