package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// poolYAML is a config whose pool sonnet (line 6 on) is the given YAML,
// indented under "pools:" as its first entry; model claude uses it.
func poolYAML(pool string) string {
	return `upstreams:
  - {name: a, base_url: 'http://127.0.0.1:1/v1'}
  - {name: b, base_url: 'http://127.0.0.1:2/v1'}
  - {name: c, base_url: 'http://127.0.0.1:3/v1'}
pools:
` + pool + `
models:
  - {name: claude, primary: pool/sonnet, chain: [c/m]}
`
}

// TestParsePools: pools: in YAML (GATEWAY §11.1) is read into Config.Pools:
// a member as a string or as {target, weight} (weight absent: 0, which is
// 1), the pool's breaker: keys, affinity and affinity_slack.
func TestParsePools(t *testing.T) {
	cfg, err := ParseConfig([]byte(poolYAML(`  - name: sonnet
    members:
      - a/m
      - {target: b/m, weight: 2.5}
      - {target: c/n}
    breaker: {trip_threshold: 4, recovery_timeout: 5s, probe_timeout: 1m, quota_cooldown: 2m,
              failure_rate: 0.3, rate_window: 10s, rate_min_calls: 5, slow_call_after: 2s,
              slow_call_rate: 0.5, recovery_backoff: 2, max_recovery_timeout: 40s}
    affinity: none
    affinity_slack: 1.5`)))
	if err != nil {
		t.Fatal(err)
	}
	want := []Pool{{
		Name:    "sonnet",
		Members: []PoolMember{{Target: "a/m"}, {Target: "b/m", Weight: 2.5}, {Target: "c/n"}},
		Breaker: Breaker{TripThreshold: 4, RecoveryTimeout: 5 * time.Second, ProbeTimeout: time.Minute, QuotaCooldown: 2 * time.Minute,
			FailureRate: 0.3, RateWindow: 10 * time.Second, RateMinCalls: 5, SlowCallAfter: 2 * time.Second,
			SlowCallRate: 0.5, RecoveryBackoff: 2, MaxRecoveryTimeout: 40 * time.Second},
		Affinity:      "none",
		AffinitySlack: 1.5,
	}}
	if !reflect.DeepEqual(cfg.Pools, want) {
		t.Fatalf("Pools = %+v\nwant %+v", cfg.Pools, want)
	}
	// Every member breaker setting comes through to the breaker.
	s := memberSettings("a/m", cfg.Pools[0].Breaker)
	if s.FailureThreshold != 4 || s.RecoveryDuration != 5*time.Second || s.RateMinCalls != 5 || s.MaxRecoveryTimeout != 40*time.Second {
		t.Fatalf("memberSettings = %+v", s)
	}
}

// TestParsePoolProblems: what the YAML decoder refuses in pools:, each
// problem by key path with the line it is on; the first problem reported
// is the decoder's (Validate's follow).
func TestParsePoolProblems(t *testing.T) {
	const head = "  - name: sonnet\n    members:\n      - a/m\n" // lines 6-8
	for _, tc := range []struct {
		name, pool, want string
	}{
		{"weight: a word", head + "      - {target: b/m, weight: two}", `pools[0].members[1].weight: "two" is not a number (line 9)`},
		{"weight: a quoted number", head + "      - {target: b/m, weight: '2'}", `pools[0].members[1].weight: "2" is not a number (line 9)`},
		{"weight: a list", head + "      - {target: b/m, weight: [2]}", `pools[0].members[1].weight: must be a single value (line 9)`},
		{"weight: 0 (absent is 1, zero cannot be meant)", head + "      - {target: b/m, weight: 0}", `pools[0].members[1].weight: must be a finite number above zero (got 0) (line 9)`},
		{"weight: negative", head + "      - {target: b/m, weight: -1}", `pools[0].members[1].weight: must be a finite number above zero (got -1) (line 9)`},
		{"weight: .inf", head + "      - {target: b/m, weight: .inf}", `pools[0].members[1].weight: must be a finite number above zero (got +Inf) (line 9)`},
		{"weight: .nan", head + "      - {target: b/m, weight: .nan}", `pools[0].members[1].weight: must be a finite number above zero (got NaN) (line 9)`},
		{"a member that is a list", head + "      - [b/m]", `pools[0].members[1]: must be upstream/model or a mapping {target, weight} (line 9)`},
		{"an unknown key of a member", head + "      - {target: b/m, wieght: 2}", `pools[0].members[1].wieght: unknown key (line 9)`},
		{"an unknown key of a pool", head + "      - b/m\n    sticky: true", `pools[0].sticky: unknown key (line 10)`},
		{"an unknown key of a pool's breaker", head + "      - b/m\n    breaker: {trip: 3}", `pools[0].breaker.trip: unknown key (line 10)`},
		{"recovery_successes under a pool's breaker", head + "      - b/m\n    breaker:\n      trip_threshold: 3\n      recovery_successes: 2",
			`pools[0].breaker.recovery_successes: not allowed under a pool's breaker: a member closes on one fast probe success (recovery_successes is a model breaker's) (line 12)`},
		{"max_fail_count under a pool's breaker", head + "      - b/m\n    breaker: {max_fail_count: 2}",
			`pools[0].breaker.max_fail_count: not allowed under a pool's breaker: a member closes on one fast probe success and has no chain (max_fail_count is a model breaker's) (line 10)`},
		{"a pool's breaker value", head + "      - b/m\n    breaker: {trip_threshold: 0}", `pools[0].breaker.trip_threshold: must be at least 1 (omit the key for the default) (line 10)`},
		{"affinity empty", head + "      - b/m\n    affinity: ''", `pools[0].affinity: must not be empty (omit the key for the default) (line 10)`},
		{"affinity_slack: 0", head + "      - b/m\n    affinity_slack: 0", `pools[0].affinity_slack: must be a finite number of at least 1 (got 0) (line 10)`},
		{"affinity_slack: a word", head + "      - b/m\n    affinity_slack: wide", `pools[0].affinity_slack: "wide" is not a number (line 10)`},
		{"members: not a list", "  - name: sonnet\n    members: a/m", `pools[0].members: must be a list (line 7)`},
		{"a pool: not a mapping", "  - sonnet", `pools[0]: must be a mapping (line 6)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(poolYAML(tc.pool)))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseConfig = %v, want a *ConfigError", err)
			}
			if got := ce.Problems[0].Error(); got != tc.want {
				t.Fatalf("first problem:\n  %s\nwant:\n  %s\nall:\n%s", got, tc.want, err)
			}
		})
	}
}

// TestParsePoolCheckRules: a Validate rule reached from YAML names the
// same key path (a model's unknown pool among them).
func TestParsePoolCheckRules(t *testing.T) {
	y := strings.Replace(poolYAML("  - {name: sonnet, members: [a/m, b/m, a/m], affinity: sticky}"), "chain: [c/m]", "chain: [pool/snnet]", 1)
	_, err := ParseConfig([]byte(y))
	want := `pools[0].members[2]: "a/m" duplicates pools[0].members[0]
pools[0].affinity: "sticky" is not session or none
models[0].chain[0]: unknown pool "snnet" (pools: sonnet)`
	if err == nil || err.Error() != want {
		t.Fatalf("ParseConfig = %v\nwant:\n%s", err, want)
	}
}

// TestPoolsGuideConfigParses: the pools: example of docs/gateway.md, with
// the upstreams it names, is valid and reads as it says.
func TestPoolsGuideConfigParses(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "gateway.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "**Pools** (`pools:`")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	yaml, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/gateway.md has no pools: example")
	}
	ups := `upstreams:
  - {name: anthropic, api: anthropic, base_url: 'https://api.anthropic.com'}
  - {name: anthropic-b, api: anthropic, base_url: 'https://api.anthropic.com'}
  - {name: bedrock, api: bedrock, region: us-east-1}
  - {name: openai, base_url: 'https://api.openai.com/v1'}
`
	cfg, err := ParseConfig([]byte(ups + yaml))
	if err != nil {
		t.Fatalf("docs/gateway.md:\n%s\n%v", yaml, err)
	}
	p := cfg.Pools[0]
	if len(p.Members) != 3 || p.Members[2].Weight != 2 || p.Breaker.RecoveryBackoff != 2 || p.Affinity != "session" || p.AffinitySlack != 2 {
		t.Fatalf("pool %+v", p)
	}
	if ws := cfg.Warnings(); len(ws) != 0 {
		t.Fatalf("warnings %v", ws)
	}
}
