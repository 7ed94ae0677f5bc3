package agent_test

import (
	"testing"
	"testing/synctest"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
)

// SEMANTICS §8.3 in the agent: the ladder's same-model retries spend the
// model's retry budget; with none left the attempt ends with its failure and
// the turn moves on to the next model.
func TestRetryBudgetBoundsSameModelRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budget   float64
		burst    float64
		requests int // to the primary, over two runs
	}{
		// Each run's turn makes 5 attempts on the primary (the breaker keeps
		// routing there: fast 503s, threshold 10), then one on b.
		{"budget of 1: one retry in all", 0.1, 1, 6 + 5},              // run 1: 2+1+1+1+1; run 2: 1 each
		{"budget off: the ladder's 3 retries each", -1, 0, 2 * 5 * 4}, // 4 requests per attempt
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sp := newScripted().on("a", failing(503)).on("b", always("from b"))
				a := mustNew(t, agent.Config{Provider: sp, Models: fallback.Settings{Primary: "a", Chain: []string{"b"},
					TripThreshold: 10, RetryBudget: tc.budget, RetryBudgetBurst: tc.burst}})
				for range 2 {
					res, err := a.Run(t.Context(), user("hi"))
					if err != nil {
						t.Fatal(err)
					}
					equal(t, "answer", res.Answer, "from b")
				}
				equal(t, "primary requests", sp.Count("a"), tc.requests)
			})
		})
	}
}
