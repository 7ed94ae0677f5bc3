package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// With every default (issue 13): the primary is down (500), the first backup
// is rate limited (a 429 storm), the second backup is healthy. The first turn
// walks the chain and is served by the second backup; the run succeeds. The
// real OpenAI adapter and the default retry ladder run in fake time.
func TestDefaultsWalkTheWholeChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary":  llmtest.Always(llmtest.Error(500)),
			"backup-1": llmtest.Always(llmtest.RateLimit("")),
			"backup-2": lookupThenAnswer,
		}))
		a := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h),
			Models:   fallback.Settings{Primary: "primary", Chain: []string{"backup-1", "backup-2"}},
			Tools:    []agent.Tool{lookupTool(t)},
		})
		res, err := a.Run(t.Context(), user("look up go"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "answer: found go")
		var models []string
		for _, r := range res.Attempts {
			if r.Turn == 1 {
				models = append(models, r.Model)
			}
		}
		equalSlices(t, "turn 1 attempts", models, []string{
			"primary", "primary", "primary", "backup-1", "backup-2"})
		equal(t, "primary requests", h.Count("primary"), 12)  // 3 failed turns x 4 requests
		equal(t, "backup-1 requests", h.Count("backup-1"), 2) // rev 3: one 429 per turn, each fails over at once
		equal(t, "backup-2 requests", h.Count("backup-2"), 2)
	})
}

// The default budget is exactly the whole chain once: with every model down,
// a turn tries each model for its full strike budget and ends with the chain
// exhausted, not with a spent budget. An explicit TurnAttempts is a cap.
func TestTurnAttemptsDefaultAndCap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts int
		want     error
		models   []string
	}{
		{"default walks the chain", 0, fallback.ErrExhausted, []string{"a", "a", "a", "b", "b", "c", "c"}},
		{"explicit cap", 4, agent.ErrTurnFailed, []string{"a", "a", "a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sp := newScripted().on("a", failing(500)).on("b", failing(502)).on("c", failing(503))
				a := mustNew(t, agent.Config{
					Provider:     sp,
					Models:       fallback.Settings{Primary: "a", Chain: []string{"b", "c"}},
					Retry:        noRetry,
					TurnAttempts: tc.attempts,
				})
				_, err := a.Run(t.Context(), user("hi"))
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				equalSlices(t, "requests", sp.Models(), tc.models)
			})
		})
	}
}

// A tool's own Timeout wins over Config.ToolTimeout; tools without one use it.
func TestPerToolTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}
		quick := rawTool("quick", hang)
		quick.Timeout = 2 * time.Second
		slow := rawTool("slow", hang)
		var ev events
		a := mustNew(t, agent.Config{
			Provider:    newScripted().on("m", toolThenAnswer("quick", "slow")),
			Models:      fallback.Settings{Primary: "m"},
			Tools:       []agent.Tool{quick, slow},
			ToolTimeout: time.Minute,
			OnEvent:     ev.add,
		})
		res, err := a.Run(t.Context(), user("go"))
		if err != nil {
			t.Fatal(err)
		}
		got := toolResults(res.Messages)
		equal(t, "quick", got[0].Content, "tool 'quick' timed out after 2s")
		equal(t, "slow", got[1].Content, "tool 'slow' timed out after 1m0s")
		for _, e := range ev.of(agent.EventToolCall) {
			want := map[string]time.Duration{"quick": 2 * time.Second, "slow": time.Minute}[e.Tool]
			equal(t, e.Tool+" outcome", e.Outcome, agent.OutcomeTimeout)
			equal(t, e.Tool+" duration", e.Duration, want)
		}
		equal(t, "quick failures", a.Tools().Stats("quick").Failures, 1)
	})

	bad := okTool("t", "x")
	bad.Timeout = -time.Second
	_, err := agent.New(agent.Config{Provider: newScripted(), Models: fallback.Settings{Primary: "m"}, Tools: []agent.Tool{bad}})
	if err == nil || !strings.Contains(err.Error(), `Tools[0] ("t"): Timeout must not be negative (got -1s)`) {
		t.Fatalf("New with a negative Timeout: %v", err)
	}
}
