package cli

import (
	"strings"
	"testing"
)

// TestServeCheckBackoff: `loopctl serve --check` names bad values of
// breaker.recovery_backoff and breaker.max_recovery_timeout by key path
// (GATEWAY §11.1, SEMANTICS §9.1), and accepts good ones.
func TestServeCheckBackoff(t *testing.T) {
	good := writeConfig(t, `
upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1'}]
models:
  - {name: m, primary: u/a, chain: [u/b], breaker: {recovery_timeout: 5s, recovery_backoff: 2, max_recovery_timeout: 50s}}
`)
	if code, out, errs := run(t, "serve", "--check", "--config", good); code != ExitOK || !strings.Contains(out, "OK") {
		t.Fatalf("good config: code %d, out %q, err %q", code, out, errs)
	}
	bad := writeConfig(t, `
upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1'}]
models:
  - {name: m, primary: u/a, chain: [u/b], breaker: {recovery_backoff: 0.5, max_recovery_timeout: 30s}}
  - {name: n, primary: u/a, breaker: {recovery_backoff: -1, recovery_timeout: 10s, max_recovery_timeout: 9s}}
`)
	code, _, errs := run(t, "serve", "--check", "--config", bad)
	if code != ExitUsage {
		t.Fatalf("bad config: code %d, err %q", code, errs)
	}
	for _, want := range []string{
		"models[0].breaker.recovery_backoff: must be at least 1, or 0 or 1 for off (got 0.5)",
		"models[0].breaker.max_recovery_timeout: 30s is below recovery_timeout (1m0s in force)",
		"models[1].breaker.recovery_backoff: must not be negative (got -1)",
		"models[1].breaker.max_recovery_timeout: 9s is below recovery_timeout (10s in force)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("--check output lacks %q:\n%s", want, errs)
		}
	}
}
