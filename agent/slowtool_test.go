package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// TestSlowToolTrips (SEMANTICS §8.2): the agent reports a tool's whole
// answer as its first content, so that a tool answering after
// SlowCallAfter is a slow success and the slow-call rule trips its breaker,
// while a fast tool's breaker stays closed.
func TestSlowToolTrips(t *testing.T) {
	for _, tc := range []struct {
		took  time.Duration
		trips bool
	}{{3 * time.Second, true}, {100 * time.Millisecond, false}} {
		synctest.Test(t, func(t *testing.T) {
			sp := newScripted().on("m", script([]string{"lookup"}, []string{"lookup"}))
			a := mustNew(t, agent.Config{
				Provider: sp,
				Models:   fallback.Settings{Primary: "m"},
				Tools: []agent.Tool{rawTool("lookup", func(context.Context, json.RawMessage) (string, error) {
					time.Sleep(tc.took)
					return "found", nil
				})},
				ToolBreaker: breaker.Settings{SlowCallAfter: time.Second, SlowCallRate: 0.5, RateMinCalls: 2},
			})
			if _, err := a.Run(t.Context(), user("go")); err != nil {
				t.Fatal(err)
			}
			if st := a.Tools().Breaker("lookup").State(); (st == breaker.Open) != tc.trips {
				t.Fatalf("a tool answering in %v: breaker %v, want tripped %v", tc.took, st, tc.trips)
			}
		})
	}
}
