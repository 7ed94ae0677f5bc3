package cli

import (
	"strings"
	"testing"
)

// TestServeCheckPools: `loopctl serve --check` passes a model routed
// through a pool, names every problem of pools: by key path in one pass
// (GATEWAY §11.1), and a pool no model names is a warning: the check still
// passes.
func TestServeCheckPools(t *testing.T) {
	unused := writeConfig(t, `
upstreams:
  - {name: a, base_url: 'http://127.0.0.1:1/v1'}
  - {name: b, base_url: 'http://127.0.0.1:2/v1'}
pools:
  - {name: spare, members: [a/m, {target: b/m, weight: 2}]}
models:
  - {name: m, primary: a/m}
`)
	code, out, errs := run(t, "serve", "--check", "--config", unused)
	if code != ExitOK || !strings.Contains(out, "OK") {
		t.Fatalf("a config with an unused pool: code %d, out %q, err %q", code, out, errs)
	}
	if want := "loopctl serve: " + unused + `: warning: pools[0]: pool "spare" is named by no model: its members take no traffic`; !strings.Contains(errs, want) {
		t.Fatalf("--check output lacks the warning %q:\n%s", want, errs)
	}
	used := writeConfig(t, `
upstreams:
  - {name: a, base_url: 'http://127.0.0.1:1/v1'}
  - {name: b, api: anthropic, base_url: 'http://127.0.0.1:2'}
pools:
  - name: sonnet
    members: [a/m, {target: b/m, weight: 2}]
    breaker: {trip_threshold: 3, recovery_timeout: 5s, recovery_backoff: 2}
    affinity_slack: 1.5
models:
  - {name: m, primary: pool/sonnet, chain: [a/n]}
`)
	if code, out, errs := run(t, "serve", "--check", "--config", used); code != ExitOK || !strings.Contains(out, "OK") || strings.Contains(errs, "warning") {
		t.Fatalf("a config whose model routes through a pool: code %d, out %q, err %q", code, out, errs)
	}
	bad := writeConfig(t, `
upstreams:
  - {name: a, base_url: 'http://127.0.0.1:1/v1'}
  - {name: pool, base_url: 'http://127.0.0.1:2/v1'}
pools:
  - name: sonnet
    members: [a/m, a/m]
    breaker: {recovery_successes: 2}
models:
  - {name: m, primary: a/n, chain: [a/o, pool/snnet]}
`)
	code, _, errs = run(t, "serve", "--check", "--config", bad)
	if code != ExitUsage {
		t.Fatalf("bad config: code %d, err %q", code, errs)
	}
	for _, want := range []string{
		"pools[0].breaker.recovery_successes: not allowed under a pool's breaker: a member closes on one fast probe success (recovery_successes is a model breaker's) (line 8)",
		`upstreams[1].name: "pool" is reserved: pool/<name> names a pool`,
		`pools[0].members[1]: "a/m" duplicates pools[0].members[0]`,
		`models[0].chain[1]: unknown pool "snnet" (pools: sonnet)`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("--check output lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "warning") {
		t.Errorf("an invalid config's output has a warning (its problems come alone):\n%s", errs)
	}
}
