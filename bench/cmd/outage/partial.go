package main

import (
	"fmt"
	"io"
	"math"
)

// Partial outages (issue 28, SEMANTICS rev 4 §8): the primary fails a share
// of its calls, or slows down, without ever failing trip_threshold calls in
// a row, so the consecutive rule never trips. The runs set the rev 4 keys
// below; a loopctl that does not know them yet (GATEWAY.md rev 3 §2 has no
// such keys before rev 4) runs without them, marked †, and its row is the
// baseline (-rev4 off forces that; -rev4 on refuses to run without them).

// The settings of the runs (issue 34): the failure-rate window and the
// slow-call rule of SEMANTICS §8 together, and breaker.recovery_backoff
// (§9.1) from the -recovery-backoff flag (0: the key is left out, to show
// the same run without backoff).
const (
	rateMinCalls = 20 // breaker.rate_min_calls, the brownout's and SEMANTICS §8.1's default
)

// partialBreaker is the breaker section of the brownout and slow runs.
var partialBreaker = []string{"failure_rate: 0.25", "rate_window: 10s", fmt.Sprintf("rate_min_calls: %d", rateMinCalls),
	"slow_call_after: 1s", "slow_call_rate: 0.5"}

var (
	// brownoutKind: the primary fails 3 calls in 10, never two in a row,
	// with the failure-rate window on. Goal (issue 34, over a long
	// brownout): the sick primary gets at most 12 % of the outage's client
	// requests; a short one is reported against the same share.
	brownoutKind = kind{name: "brownout", label: "fails 3 in 10, never 2 in a row", fault: brownout,
		config: runConfig{breaker: partialBreaker, backoff: true},
		share:  0.12}
	// brownoutBudgetKind: the same brownout with the default config, no
	// rate window: the retry budget (retry.budget, stated at its default)
	// alone must keep the primary under 1.2 × the client requests.
	brownoutBudgetKind = kind{name: "brownout-budget", label: "fails 3 in 10, no rate window (retry budget alone)", fault: brownout,
		config: runConfig{retry: []string{"budget: 0.2"}},
		share:  1.2, under: true}
	// slowKind: the primary answers every call after 2 s, under the 3 s
	// first-byte timeout, no hedging, slow calls counted from 1 s. Goal
	// (issue 34): at most 200 requests reach the slow primary in 30 s (the
	// slow rate trips after about 6 s; then each slow probe re-opens at
	// once, SEMANTICS §9.2).
	slowKind = kind{name: "slow", label: "answers every call after 2 s", fault: slow, noP99: true, limit: 200,
		config: runConfig{breaker: partialBreaker, backoff: true}}
)

// runConfig is what the kind adds to loopctl's base config.
func (k kind) runConfig() runConfig {
	c := k.config
	c.hedge = k.hedge
	return c
}

// partialBound returns the goal's bound on the requests to the sick primary
// for the partial kinds, and false for the others. in is the number of
// client requests due in the outage.
//
//   - share: at most share × in (strictly under it with under);
//   - limit: at most limit, however long the outage.
func partialBound(r row, in int) (int, bool) {
	switch {
	case r.kind.share > 0:
		b := float64(in) * r.kind.share
		if r.kind.under {
			return int(math.Ceil(b)) - 1, true
		}
		return int(math.Floor(b + 1e-9)), true
	case r.kind.limit > 0:
		return r.kind.limit, true
	}
	return 0, false
}

// printPartial says what the partial-outage rows set and how their goals
// on the sick primary read.
func printPartial(w io.Writer, rows []row, backoff float64) {
	seen := map[string]bool{}
	for _, r := range rows {
		k := r.kind
		if seen[k.name] || (k.share == 0 && k.limit == 0) {
			continue
		}
		seen[k.name] = true
		goal := fmt.Sprintf("≤ %.3g × the outage's client requests", k.share)
		switch {
		case k.under:
			goal = fmt.Sprintf("< %.3g × the outage's client requests", k.share)
		case k.limit > 0:
			goal = fmt.Sprintf("≤ %d", k.limit)
		}
		fmt.Fprintf(w, "\n%s: loopctl with %s; requests to the sick primary %s.", k.label, k.config.withBackoff(backoff).describe(), goal)
	}
	if len(seen) > 0 {
		fmt.Fprintln(w)
	}
}
