package gateway

import (
	"math"

	"go.yaml.in/yaml/v3"
)

// The YAML of pools: (docs/GATEWAY.md §11.1). Each pool has a name, its
// members (each "upstream/model", or {target: upstream/model, weight: 2}),
// the settings of its members' breakers, and its session affinity. Values
// that cannot be meant (a zero weight, a key a member breaker has no use
// for) are problems here, with their line; the rules a Go config must
// follow as well are Validate's (validatepools.go).

// memberBreakerOnly are the model-breaker keys a pool's breaker: does not
// take, and why: a member is a tool breaker of SEMANTICS §1, not a model
// breaker of §3.
var memberBreakerOnly = map[string]string{
	"recovery_successes": "a member closes on one fast probe success (recovery_successes is a model breaker's)",
	"max_fail_count":     "a member closes on one fast probe success and has no chain (max_fail_count is a model breaker's)",
}

// pools decodes the pools list, appending each to dst.
func (d decoder) pools(dst *[]Pool) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.seq(p, v, func(p string, v *yaml.Node) {
			var pl Pool
			d.fields(p, v, map[string]func(string, *yaml.Node){
				"name":           d.str(&pl.Name),
				"members":        d.poolMembers(&pl.Members),
				"breaker":        d.poolBreaker(&pl.Breaker),
				"affinity":       d.text(&pl.Affinity),
				"affinity_slack": d.number(&pl.AffinitySlack, slackProblem),
			})
			*dst = append(*dst, pl)
		})
	}
}

// poolMembers decodes a pool's members, appending each to dst: a string
// is the target with the default weight.
func (d decoder) poolMembers(dst *[]PoolMember) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.seq(p, v, func(p string, v *yaml.Node) {
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			var m PoolMember
			switch v.Kind {
			case yaml.ScalarNode:
				d.str(&m.Target)(p, v)
			case yaml.MappingNode:
				d.fields(p, v, map[string]func(string, *yaml.Node){
					"target": d.str(&m.Target),
					"weight": d.number(&m.Weight, weightProblem),
				})
			default:
				d.bad(p, v, "must be upstream/model or a mapping {target, weight}")
			}
			*dst = append(*dst, m)
		})
	}
}

// poolBreaker decodes a pool's breaker section into b: the model
// breaker's keys but those of memberBreakerOnly, which are problems
// saying why.
func (d decoder) poolBreaker(b *Breaker) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		keys := d.breakerKeys(b)
		for k, why := range memberBreakerOnly {
			keys[k] = func(p string, n *yaml.Node) { d.bad(p, n, "not allowed under a pool's breaker: %s", why) }
		}
		d.fields(p, v, keys)
	}
}

// number reads a YAML number (.inf and .nan included) and stores it when
// check finds nothing wrong with it; check's problem is reported at the
// key. A present key is checked as written: its zero is not the default.
func (d decoder) number(dst *float64, check func(float64) string) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		var v float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
			d.bad(p, n, "%q is not a number", s)
			return
		}
		if bad := check(v); bad != "" {
			d.bad(p, n, "%s", bad)
			return
		}
		*dst = v
	}
}

// weightProblem is what is wrong with a member's weight v (a share ratio:
// finite and above zero), or "".
func weightProblem(v float64) string {
	if !(v > 0) || math.IsInf(v, 0) {
		return "must be a finite number above zero (got " + fmtFactor(v) + ")"
	}
	return ""
}

// slackProblem is what is wrong with an affinity_slack v (a factor over
// the lowest member's cost: finite and at least 1), or "".
func slackProblem(v float64) string {
	if !(v >= 1) || math.IsInf(v, 0) {
		return "must be a finite number of at least 1 (got " + fmtFactor(v) + ")"
	}
	return ""
}
