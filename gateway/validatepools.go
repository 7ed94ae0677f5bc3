package gateway

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/loopctl/loopctl-go/pool"
)

// The rules of pools: and of pool/<name> references (docs/GATEWAY.md
// §11.1), checked by Validate so that `loopctl serve --check` names each
// by its key path.

// poolUpstream is the reserved upstream name: a chain entry pool/<name>
// names a pool, so no upstream may be called pool.
const poolUpstream = "pool"

// poolIndex is what the models' references are checked against.
type poolIndex struct {
	byName  map[string]int      // each pool's index by name
	names   []string            // the names, in config order, for the problems' text
	members map[string][]string // each pool's member targets, by pool name
}

// pools checks the pools list against the upstreams (ups: their names)
// and returns the index the models' references are checked against.
func (ps *problems) pools(list []Pool, ups map[string]int) poolIndex {
	idx := poolIndex{byName: map[string]int{}, members: map[string][]string{}}
	for i, pl := range list {
		p := fmt.Sprintf("pools[%d]", i)
		ps.name(p, "pools", pl.Name, " (models name it as pool/<name>)", idx.byName, i)
		targets := ps.poolMembers(p, pl.Members, ups)
		ps.poolBreaker(p+".breaker", pl.Breaker)
		ps.poolAffinity(p, pl)
		if _, dup := idx.members[pl.Name]; !dup && pl.Name != "" {
			idx.names = append(idx.names, pl.Name)
			idx.members[pl.Name] = targets
		}
	}
	ps.sharedMembers(list)
	return idx
}

// poolMembers checks a pool's members (the pool at path p): 2 to
// pool.MaxMembers, each a deployment (upstream/model of a known upstream,
// not a pool), none twice, each weight a finite number above zero (0: 1).
// It returns the targets that are not pools.
func (ps *problems) poolMembers(p string, members []PoolMember, ups map[string]int) []string {
	switch n := len(members); {
	case n < 2:
		ps.add(p+".members", "a pool needs at least 2 members (got %d): a single deployment is a chain entry (upstream/model)", n)
	case n > pool.MaxMembers:
		ps.add(p+".members", "a pool has at most %d members (got %d)", pool.MaxMembers, n)
	}
	seen := map[string]string{}
	targets := make([]string, 0, len(members))
	for j, m := range members {
		mp := fmt.Sprintf("%s.members[%d]", p, j)
		if up, name, _ := strings.Cut(m.Target, "/"); up == poolUpstream && name != "" {
			ps.add(mp, "%q is a pool: a member is a deployment (upstream/model)", m.Target)
		} else {
			ps.ref(mp, m.Target, ups, poolIndex{}, seen)
			targets = append(targets, m.Target)
		}
		if m.Weight != 0 {
			if bad := weightProblem(m.Weight); bad != "" {
				ps.add(mp+".weight", "%s", bad)
			}
		}
	}
	return targets
}

// poolBreaker checks a pool's breaker section (at path p): the model
// breaker's value rules, with the members' default recovery_timeout, and
// neither of memberBreakerOnly's keys.
func (ps *problems) poolBreaker(p string, b Breaker) {
	for _, k := range []struct {
		key string
		set bool
	}{{"recovery_successes", b.RecoverySuccesses != 0}, {"max_fail_count", b.MaxFailCount != 0}} {
		if k.set {
			ps.add(p+"."+k.key, "not allowed under a pool's breaker: %s", memberBreakerOnly[k.key])
		}
	}
	b.RecoverySuccesses, b.MaxFailCount = 0, 0
	ps.breaker(p, b)
	ps.windowRules(p, b)
	ps.backoffOver(p, b, defaultMemberRecoveryTimeout)
}

// poolAffinity checks a pool's affinity and affinity_slack (the pool at
// path p).
func (ps *problems) poolAffinity(p string, pl Pool) {
	switch pl.Affinity {
	case "", "session", "none":
	default:
		ps.add(p+".affinity", "%q is not session or none", pl.Affinity)
	}
	if pl.AffinitySlack != 0 {
		if bad := slackProblem(pl.AffinitySlack); bad != "" {
			ps.add(p+".affinity_slack", "%s", bad)
		}
	}
}

// sharedMembers checks that every pool listing one deployment gives its
// member breaker the same settings (defaults applied): the deployment has
// one breaker, shared by every pool that lists it (§11.1).
func (ps *problems) sharedMembers(list []Pool) {
	type first struct {
		pool, path string
		tuning     []keyValue
	}
	seen := map[string]first{}
	for i, pl := range list {
		t := memberTuning(pl.Breaker)
		for j, m := range pl.Members {
			if m.Target == "" || strings.HasPrefix(m.Target, poolUpstream+"/") {
				continue // not a deployment: poolMembers names it
			}
			f, ok := seen[m.Target]
			if !ok {
				seen[m.Target] = first{pl.Name, fmt.Sprintf("pools[%d].members[%d]", i, j), t}
				continue
			}
			if strings.HasPrefix(f.path, fmt.Sprintf("pools[%d].", i)) {
				continue // a repeated member: poolMembers names it
			}
			if diff := tuningDiff(f.tuning, t); diff != "" {
				ps.add(fmt.Sprintf("pools[%d].members[%d]", i, j),
					"%q is also a member of pool %q (%s) with other breaker: settings (%s): a deployment has one member breaker, shared by every pool that lists it",
					m.Target, f.pool, f.path, diff)
			}
		}
	}
}

// keyValue is one setting of a member breaker, by its YAML key.
type keyValue struct{ key, value string }

// memberTuning lists the settings of the member breakers of a pool with
// breaker section b, defaults applied, by YAML key.
func memberTuning(b Breaker) []keyValue {
	s := memberSettings("", b)
	f := fmtFactor
	return []keyValue{
		{"trip_threshold", strconv.Itoa(s.FailureThreshold)},
		{"recovery_timeout", s.RecoveryDuration.String()},
		{"probe_timeout", s.ProbeTimeout.String()},
		{"quota_cooldown", s.QuotaCooldown.String()},
		{"failure_rate", f(s.FailureRate)},
		{"rate_window", s.RateWindow.String()},
		{"rate_min_calls", strconv.Itoa(s.RateMinCalls)},
		{"slow_call_after", s.SlowCallAfter.String()},
		{"slow_call_rate", f(s.SlowCallRate)},
		{"recovery_backoff", f(s.RecoveryBackoff)},
		{"max_recovery_timeout", s.MaxRecoveryTimeout.String()},
	}
}

// tuningDiff names the settings a and b (of memberTuning) differ in, as
// "key a vs b, ...", or "".
func tuningDiff(a, b []keyValue) string {
	var diff []string
	for i := range a {
		if a[i].value != b[i].value {
			diff = append(diff, a[i].key+" "+a[i].value+" vs "+b[i].value)
		}
	}
	return strings.Join(diff, ", ")
}

// poolRef checks the pool a model's entry pool/<name> names (at path).
func (ps *problems) poolRef(path, name string, idx poolIndex) {
	if _, ok := idx.byName[name]; ok {
		return
	}
	if len(idx.names) == 0 {
		ps.add(path, "unknown pool %q (the config has no pools:)", name)
		return
	}
	ps.add(path, "unknown pool %q (pools: %s)", name, strings.Join(idx.names, ", "))
}

// poolAndMember checks that model m (at path p) names no deployment both
// through a pool entry and as an entry of its own, in either order: the
// request would reach that deployment twice, through two breakers.
func (ps *problems) poolAndMember(p string, m Model, idx poolIndex) {
	entries := append([]string{m.Primary}, m.Chain...)
	path := func(k int) string {
		if k == 0 {
			return p + ".primary"
		}
		return fmt.Sprintf("%s.chain[%d]", p, k-1)
	}
	for k, e := range entries {
		name, isPool := strings.CutPrefix(e, poolUpstream+"/")
		if !isPool {
			continue
		}
		for l, other := range entries {
			if l == k || !contains(idx.members[name], other) {
				continue
			}
			const why = "the request would reach that deployment twice, through two breakers"
			if k > l {
				ps.add(path(k), "pool/%s lists %q, which %s names too: %s", name, other, path(l), why)
			} else {
				ps.add(path(l), "%q is a member of pool/%s (%s): %s", other, name, path(k), why)
			}
		}
	}
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// reservedUpstream checks an upstream's name (the upstream at path p):
// not poolUpstream.
func (ps *problems) reservedUpstream(p, name string) {
	if name == poolUpstream {
		ps.add(p+".name", "%q is reserved: pool/<name> names a pool", name)
	}
}

// Warnings returns what is suspicious in c but no error, each named by its
// key path: a pool that no model names (its members take no traffic; not
// an error, so that a reload that drops a model keeps working). `loopctl
// serve` and `serve --check` print them; [Live.Reload] logs them.
func (c Config) Warnings() []Problem {
	used := map[string]bool{}
	for _, m := range c.Models {
		for _, e := range append([]string{m.Primary}, m.Chain...) {
			if name, ok := strings.CutPrefix(e, poolUpstream+"/"); ok {
				used[name] = true
			}
		}
	}
	var ws []Problem
	for i, pl := range c.Pools {
		if !used[pl.Name] {
			ws = append(ws, Problem{Path: fmt.Sprintf("pools[%d]", i), Message: fmt.Sprintf("pool %q is named by no model: its members take no traffic", pl.Name)})
		}
	}
	return ws
}
