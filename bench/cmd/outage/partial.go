package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Partial outages (issue 28, SEMANTICS rev 4 §8): the primary fails a share
// of its calls, or slows down, without ever failing trip_threshold calls in
// a row, so the consecutive rule never trips. The runs set the rev 4 keys
// below; a loopctl that does not know them yet (GATEWAY.md rev 3 §2 has no
// such keys before rev 4) runs without them, marked †, and its row is the
// baseline (-rev4 off forces that; -rev4 on refuses to run without them).

// The rev 4 settings of the runs (issue 28's goals).
const (
	rateMinCalls = 20 // breaker.rate_min_calls, the brownout's and SEMANTICS §8.1's default
)

var (
	// brownoutKind: the primary fails 3 calls in 10, never two in a row,
	// with the failure-rate window on. Goal: the sick primary gets at most
	// a third of the outage's client requests.
	brownoutKind = kind{name: "brownout", label: "fails 3 in 10, never 2 in a row", fault: brownout,
		config: runConfig{breaker: []string{"failure_rate: 0.25", "rate_window: 10s", fmt.Sprintf("rate_min_calls: %d", rateMinCalls)}},
		share:  1.0 / 3}
	// brownoutBudgetKind: the same brownout with the default config, no
	// rate window: the retry budget (retry.budget, stated at its default)
	// alone must keep the primary under 1.2 × the client requests.
	brownoutBudgetKind = kind{name: "brownout-budget", label: "fails 3 in 10, no rate window (retry budget alone)", fault: brownout,
		config: runConfig{retry: []string{"budget: 0.2"}},
		share:  1.2, under: true}
	// slowKind: the primary answers every call after 2 s, under the 3 s
	// first-byte timeout, no hedging, slow calls counted from 1 s.
	slowKind = kind{name: "slow", label: "answers every call after 2 s", fault: slow, noP99: true, slowTrip: true,
		config: runConfig{breaker: []string{"slow_call_after: 1s", "slow_call_rate: 0.5"}}}
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
//   - slowTrip: rate_min_calls (the window must hold that many verdicts,
//     every one of them slow) + the client requests in flight when the
//     rate_min_calls-th slow request ended (the trip) + trip_threshold
//     probes per cooldown of the outage.
func partialBound(r row, o options, in int) (int, bool) {
	switch {
	case r.kind.share > 0:
		b := float64(in) * r.kind.share
		if r.kind.under {
			return int(math.Ceil(b)) - 1, true
		}
		return int(math.Floor(b + 1e-9)), true
	case r.kind.slowTrip:
		cooldowns := int((o.outage + cooldown - 1) / cooldown)
		return rateMinCalls + inFlightAtEnd(r, rateMinCalls) + tripThreshold*cooldowns, true
	}
	return 0, false
}

// inFlightAtEnd returns the client requests in flight when the k-th broken
// request of the primary ended (0 if fewer than k ended).
func inFlightAtEnd(r row, k int) int {
	var ends []time.Duration
	for _, a := range r.primary {
		if a.broken && a.at >= r.sched.start && a.end > 0 {
			ends = append(ends, a.end)
		}
	}
	if k < 1 || len(ends) < k {
		return 0
	}
	slices.Sort(ends)
	trip, n := ends[k-1], 0
	for _, rec := range r.recs {
		if rec.sent && rec.at <= trip && rec.at+rec.lat > trip {
			n++
		}
	}
	return n
}

// printPartial says what the partial-outage rows set and how their goals
// on the sick primary read.
func printPartial(w io.Writer, rows []row) {
	seen := map[string]bool{}
	for _, r := range rows {
		k := r.kind
		if seen[k.name] || (k.share == 0 && !k.slowTrip) {
			continue
		}
		seen[k.name] = true
		goal := fmt.Sprintf("≤ %.3g × the outage's client requests", k.share)
		switch {
		case k.under:
			goal = fmt.Sprintf("< %.3g × the outage's client requests", k.share)
		case k.slowTrip:
			goal = fmt.Sprintf("≤ rate_min_calls %d + in flight at the trip + trip_threshold per cooldown", rateMinCalls)
		}
		fmt.Fprintf(w, "\n%s: loopctl with %s; requests to the sick primary %s.", k.label, k.config.describe(), goal)
	}
	if len(seen) > 0 {
		fmt.Fprintln(w)
	}
}
