package gateway

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// The config of the failure-rate window and slow calls
// (breaker.failure_rate, rate_window, rate_min_calls, slow_call_after,
// slow_call_rate) and the retry budget (retry.budget, budget_burst).

// rate reads a share: a number above zero and at most 1.
func (d decoder) rate(dst *float64) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || v > 1 {
			d.bad(p, n, "%q is not a share above 0 and at most 1", s)
			return
		}
		*dst = v
	}
}

// budget reads retry.budget: a number of tokens ≥ 0 (0 is stored as
// [RetryBudgetNone]), or off ([RetryBudgetOff]).
func (d decoder) budget(dst *float64) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		if s == "off" {
			*dst = RetryBudgetOff
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil || !(v >= 0) || v > 1e6:
			d.bad(p, n, "%q is not a number of at least 0 or off", s)
		case v == 0:
			*dst = RetryBudgetNone
		default:
			*dst = v
		}
	}
}

// windowRules checks a model's failure-rate and slow-call settings (at path
// p): shares in [0, 1], nothing negative, and slow_call_rate only with
// slow_call_after.
func (ps *problems) windowRules(p string, b Breaker) {
	for _, f := range []struct {
		key  string
		rate float64
	}{{"failure_rate", b.FailureRate}, {"slow_call_rate", b.SlowCallRate}} {
		if !(f.rate >= 0) || f.rate > 1 {
			ps.add(p+"."+f.key, "must be a share above 0 and at most 1")
		}
	}
	if b.RateWindow < 0 {
		ps.add(p+".rate_window", "must not be negative")
	}
	if b.RateMinCalls < 0 {
		ps.add(p+".rate_min_calls", "must not be negative")
	}
	if b.SlowCallAfter < 0 {
		ps.add(p+".slow_call_after", "must not be negative")
	}
	// slow_call_after alone is meaningful: a slow probe re-opens (SEMANTICS
	// §9.2); the slow-call rate needs the threshold it counts against.
	if b.SlowCallRate > 0 && b.SlowCallAfter == 0 {
		ps.add(p+".slow_call_rate", "needs slow_call_after (slow calls are off without it)")
	}
}

// retryBudget checks retry.budget and retry.budget_burst.
func (ps *problems) retryBudget(r Retry) {
	if r.Budget != RetryBudgetOff && r.Budget != RetryBudgetNone && !(r.Budget >= 0) {
		ps.add("retry.budget", "must be a number of at least 0, or off")
	}
	if !(r.BudgetBurst >= 0) {
		ps.add("retry.budget_burst", "must not be negative")
	}
}

// retryFeed is the fallback.Settings.RetryBudget of r's budget: RetryBudgetNone
// is off there, and the gateway's ladder refuses every retry itself.
func retryFeed(r Retry) float64 {
	if r.Budget == RetryBudgetNone {
		return -1
	}
	return r.Budget
}
