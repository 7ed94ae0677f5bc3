package gateway

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// checkedPoolConfig is a valid config with one pool, sonnet (members a/m and
// b/m), used by model claude as its primary, with change applied.
func checkedPoolConfig(change func(*Config)) Config {
	c := Config{
		Upstreams: []Upstream{
			{Name: "a", BaseURL: "http://127.0.0.1:1/v1"},
			{Name: "b", BaseURL: "http://127.0.0.1:2/v1"},
			{Name: "c", BaseURL: "http://127.0.0.1:3/v1"},
		},
		Pools:  []Pool{{Name: "sonnet", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m", Weight: 2}}}},
		Models: []Model{{Name: "claude", Primary: "pool/sonnet", Chain: []string{"c/m"}}},
	}
	if change != nil {
		change(&c)
	}
	return c
}

// poolMembersOf is a pool's member list of targets, each of weight 0 (1).
func poolMembersOf(targets ...string) []PoolMember {
	ms := make([]PoolMember, len(targets))
	for i, t := range targets {
		ms[i] = PoolMember{Target: t}
	}
	return ms
}

// TestValidatePools: one row per --check rule of GATEWAY §11.1, each
// problem named by its key path, with its exact message, all in one pass.
func TestValidatePools(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   []Problem // nil: valid
	}{
		{"valid", nil, nil},
		{"valid: a pool anywhere in a chain, every key set", func(c *Config) {
			c.Pools[0].Breaker = Breaker{TripThreshold: 3, RecoveryTimeout: 5 * time.Second, RecoveryBackoff: 2, MaxRecoveryTimeout: 50 * time.Second, FailureRate: 0.3, SlowCallAfter: time.Second, SlowCallRate: 0.5}
			c.Pools[0].Affinity, c.Pools[0].AffinitySlack = "none", 1
			c.Models[0].Primary, c.Models[0].Chain = "c/m", []string{"pool/sonnet"}
		}, nil},
		{"unknown pool in a chain", func(c *Config) { c.Models[0].Chain = []string{"c/m", "pool/snnet"} },
			[]Problem{{"models[0].chain[1]", `unknown pool "snnet" (pools: sonnet)`}}},
		{"unknown pool as the primary, no pools", func(c *Config) { c.Pools = nil },
			[]Problem{{"models[0].primary", `unknown pool "sonnet" (the config has no pools:)`}}},
		{"unknown upstream of a model", func(c *Config) { c.Models[0].Chain = []string{"anthropc/m"} },
			[]Problem{{"models[0].chain[0]", `unknown upstream "anthropc"`}}},
		{"two pools with one name", func(c *Config) { c.Pools = append(c.Pools, Pool{Name: "sonnet", Members: poolMembersOf("a/n", "b/n")}) },
			[]Problem{{"pools[1].name", `"sonnet" duplicates pools[0]`}}},
		{"an empty pool name", func(c *Config) { c.Pools = append(c.Pools, Pool{Members: poolMembersOf("a/n", "b/n")}) },
			[]Problem{{"pools[1].name", "required"}}},
		{"a pool name with a slash", func(c *Config) { c.Pools = append(c.Pools, Pool{Name: "x/y", Members: poolMembersOf("a/n", "b/n")}) },
			[]Problem{{"pools[1].name", `"x/y" must not contain "/" (models name it as pool/<name>)`}}},
		{"a repeated member", func(c *Config) { c.Pools[0].Members = poolMembersOf("a/m", "b/m", "a/m") },
			[]Problem{{"pools[0].members[2]", `"a/m" duplicates pools[0].members[0]`}}},
		{"a member that is a pool", func(c *Config) {
			c.Pools = append(c.Pools, Pool{Name: "outer", Members: poolMembersOf("pool/sonnet", "c/m")})
			c.Models[0].Chain = []string{"pool/outer"}
		}, []Problem{{"pools[1].members[0]", `"pool/sonnet" is a pool: a member is a deployment (upstream/model)`}}},
		{"a member of an unknown upstream", func(c *Config) { c.Pools[0].Members[1].Target = "anthropc/m" },
			[]Problem{{"pools[0].members[1]", `unknown upstream "anthropc"`}}},
		{"a member that is not upstream/model", func(c *Config) { c.Pools[0].Members[1].Target = "m" },
			[]Problem{{"pools[0].members[1]", `"m" is not upstream/model`}}},
		{"a member without a target", func(c *Config) { c.Pools[0].Members[1].Target = "" },
			[]Problem{{"pools[0].members[1]", "required (upstream/model)"}}},
		{"bad weights: NaN, +Inf, -Inf, negative", func(c *Config) {
			c.Pools[0].Members = []PoolMember{{"a/m", math.NaN()}, {"b/m", math.Inf(1)}, {"c/m", math.Inf(-1)}, {"a/n", -1}, {"b/n", 0.5}}
			c.Models[0].Chain = nil
		}, []Problem{
			{"pools[0].members[0].weight", "must be a finite number above zero (got NaN)"},
			{"pools[0].members[1].weight", "must be a finite number above zero (got +Inf)"},
			{"pools[0].members[2].weight", "must be a finite number above zero (got -Inf)"},
			{"pools[0].members[3].weight", "must be a finite number above zero (got -1)"},
		}},
		{"a pool of one", func(c *Config) { c.Pools[0].Members = poolMembersOf("a/m") },
			[]Problem{{"pools[0].members", "a pool needs at least 2 members (got 1): a single deployment is a chain entry (upstream/model)"}}},
		{"a pool of none", func(c *Config) { c.Pools[0].Members = nil },
			[]Problem{{"pools[0].members", "a pool needs at least 2 members (got 0): a single deployment is a chain entry (upstream/model)"}}},
		{"a pool named twice in one model", func(c *Config) { c.Models[0].Chain = []string{"c/m", "pool/sonnet"} },
			[]Problem{{"models[0].chain[1]", `"pool/sonnet" duplicates models[0].primary`}}},
		{"a pool, then one of its members", func(c *Config) { c.Models[0].Chain = []string{"b/m"} },
			[]Problem{{"models[0].chain[0]", `"b/m" is a member of pool/sonnet (models[0].primary): the request would reach that deployment twice, through two breakers`}}},
		{"a member, then its pool", func(c *Config) { c.Models[0].Primary, c.Models[0].Chain = "a/m", []string{"c/m", "pool/sonnet"} },
			[]Problem{{"models[0].chain[1]", `pool/sonnet lists "a/m", which models[0].primary names too: the request would reach that deployment twice, through two breakers`}}},
		{"conflicting breaker settings for one deployment", func(c *Config) {
			c.Pools = append(c.Pools, Pool{Name: "opus", Members: poolMembersOf("c/m", "b/m"), Breaker: Breaker{TripThreshold: 5, RecoveryTimeout: time.Minute}})
			c.Models[0].Chain = []string{"pool/opus"}
		}, []Problem{{"pools[1].members[1]", `"b/m" is also a member of pool "sonnet" (pools[0].members[1]) with other breaker: settings (trip_threshold 3 vs 5, recovery_timeout 30s vs 1m0s): a deployment has one member breaker, shared by every pool that lists it`}}},
		{"one deployment in two pools, the same settings once defaults apply", func(c *Config) {
			c.Pools = append(c.Pools, Pool{Name: "opus", Members: poolMembersOf("c/m", "b/m"), Breaker: Breaker{TripThreshold: 3, RecoveryTimeout: 30 * time.Second}})
			c.Models[0].Chain = []string{"pool/opus"}
		}, nil},
		{"a bad affinity", func(c *Config) { c.Pools[0].Affinity = "sticky" },
			[]Problem{{"pools[0].affinity", `"sticky" is not session or none`}}},
		{"bad affinity_slack: below 1", func(c *Config) { c.Pools[0].AffinitySlack = 0.5 },
			[]Problem{{"pools[0].affinity_slack", "must be a finite number of at least 1 (got 0.5)"}}},
		{"bad affinity_slack: NaN", func(c *Config) { c.Pools[0].AffinitySlack = math.NaN() },
			[]Problem{{"pools[0].affinity_slack", "must be a finite number of at least 1 (got NaN)"}}},
		{"bad affinity_slack: Inf", func(c *Config) { c.Pools[0].AffinitySlack = math.Inf(1) },
			[]Problem{{"pools[0].affinity_slack", "must be a finite number of at least 1 (got +Inf)"}}},
		{"keys not allowed under a pool's breaker", func(c *Config) { c.Pools[0].Breaker = Breaker{RecoverySuccesses: 2, MaxFailCount: 1} },
			[]Problem{
				{"pools[0].breaker.recovery_successes", "not allowed under a pool's breaker: a member closes on one fast probe success (recovery_successes is a model breaker's)"},
				{"pools[0].breaker.max_fail_count", "not allowed under a pool's breaker: a member closes on one fast probe success and has no chain (max_fail_count is a model breaker's)"},
			}},
		{"an upstream named pool", func(c *Config) { c.Upstreams[2].Name = "pool"; c.Models[0].Chain = nil },
			[]Problem{{"upstreams[2].name", `"pool" is reserved: pool/<name> names a pool`}}},
		{"breaker values: recovery_backoff in (0, 1)", func(c *Config) { c.Pools[0].Breaker.RecoveryBackoff = 0.5 },
			[]Problem{{"pools[0].breaker.recovery_backoff", "must be at least 1, or 0 or 1 for off (got 0.5): below 1 it would shorten each repeated cooldown"}}},
		{"breaker values: max_recovery_timeout below the members' default recovery_timeout", func(c *Config) { c.Pools[0].Breaker.MaxRecoveryTimeout = 20 * time.Second },
			[]Problem{{"pools[0].breaker.max_recovery_timeout", "20s is below recovery_timeout (30s in force)"}}},
		{"breaker values: max_recovery_timeout at the members' default recovery_timeout", func(c *Config) { c.Pools[0].Breaker.MaxRecoveryTimeout = 30 * time.Second }, nil},
		{"breaker values: negative, a share above 1, slow_call_rate alone", func(c *Config) {
			c.Pools[0].Breaker = Breaker{TripThreshold: -1, QuotaCooldown: -time.Second, FailureRate: 1.5, SlowCallRate: 0.5}
		}, []Problem{
			{"pools[0].breaker.trip_threshold", "must not be negative"},
			{"pools[0].breaker.quota_cooldown", "must not be negative"},
			{"pools[0].breaker.failure_rate", "must be a share above 0 and at most 1"},
			{"pools[0].breaker.slow_call_rate", "needs slow_call_after (slow calls are off without it)"},
		}},
		{"every problem in one pass", func(c *Config) {
			c.Pools = append(c.Pools, Pool{Name: "", Members: poolMembersOf("a/m")}, Pool{Name: "opus", Members: poolMembersOf("c/m", "c/m"), Affinity: "x"})
			c.Models[0].Chain = []string{"pool/snnet"}
		}, []Problem{
			{"pools[1].name", "required"},
			{"pools[1].members", "a pool needs at least 2 members (got 1): a single deployment is a chain entry (upstream/model)"},
			{"pools[2].members[1]", `"c/m" duplicates pools[2].members[0]`},
			{"pools[2].affinity", `"x" is not session or none`},
			{"models[0].chain[0]", `unknown pool "snnet" (pools: sonnet, opus)`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkedPoolConfig(tc.change).Validate()
			var got []Problem
			if ce := (*ConfigError)(nil); errors.As(err, &ce) {
				got = ce.Problems
			} else if err != nil {
				t.Fatalf("Validate = %v, want a *ConfigError", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", problemLines(got), problemLines(tc.want))
			}
		})
	}
}

// problemLines is ps, one per line, for a test's failure message.
func problemLines(ps []Problem) string {
	s := ""
	for _, p := range ps {
		s += "  " + p.Error() + "\n"
	}
	return s
}

// TestPoolWarnings: a pool no model names is a warning, not an error
// (GATEWAY §11.1: a reload that drops a model keeps working).
func TestPoolWarnings(t *testing.T) {
	c := checkedPoolConfig(func(c *Config) {
		c.Pools = append(c.Pools, Pool{Name: "spare", Members: poolMembersOf("c/m", "c/n")})
	})
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate = %v, want nil: an unused pool is no error", err)
	}
	want := []Problem{{"pools[1]", `pool "spare" is named by no model: its members take no traffic`}}
	if got := c.Warnings(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Warnings = %v, want %v", got, want)
	}
	if got := checkedPoolConfig(nil).Warnings(); got != nil {
		t.Fatalf("Warnings of a config whose pools are all used = %v, want none", got)
	}
}
