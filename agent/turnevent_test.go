package agent_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
)

// EventTurnFinished carries the response's usage and reported model on
// success, and nothing of either on failure.
func TestTurnFinishedCarriesUsageAndResponseModel(t *testing.T) {
	tests := []struct {
		name      string
		script    func(context.Context, int, agent.Request) (agent.Response, error)
		wantUsage agent.Usage
		wantModel string
		wantErr   bool
	}{
		{"reported model", func(context.Context, int, agent.Request) (agent.Response, error) {
			return agent.Response{Message: agent.Message{Content: "ok"}, Model: "a-2024-08-06",
				Usage: agent.Usage{InputTokens: 11, OutputTokens: 4}, StopReason: agent.StopEnd}, nil
		}, agent.Usage{InputTokens: 11, OutputTokens: 4}, "a-2024-08-06", false},
		{"no reported model", func(context.Context, int, agent.Request) (agent.Response, error) {
			return agent.Response{Message: agent.Message{Content: "ok"}, Usage: agent.Usage{InputTokens: 2, OutputTokens: 1}}, nil
		}, agent.Usage{InputTokens: 2, OutputTokens: 1}, "", false},
		{"failure", failing(400), agent.Usage{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs events
			a := mustNew(t, agent.Config{Provider: newScripted().on("a", tt.script),
				Models: fallback.Settings{Primary: "a"}, Retry: noRetry, TurnAttempts: 1, OnEvent: evs.add})
			_, err := a.Run(t.Context(), user("hi"))
			equal(t, "run failed", err != nil, tt.wantErr)
			fin := evs.of(agent.EventTurnFinished)
			equal(t, "turn-finished events", len(fin), 1)
			equal(t, "usage", fin[0].Usage, tt.wantUsage)
			equal(t, "response model", fin[0].ResponseModel, tt.wantModel)
			equal(t, "routed model", fin[0].Model, "a")
		})
	}
}

// A turn the model breaker refuses (fallback.ErrExhausted) is reported by
// EventTurnRefused, with no turn-started event: no request was sent.
func TestTurnRefusedEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var evs events
		sp := newScripted().on("a", failing(500)).on("b", failing(503))
		a := mustNew(t, agent.Config{
			Provider:     sp,
			Models:       fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1, MaxFailCount: 1},
			Retry:        noRetry,
			TurnAttempts: 5,
			OnEvent:      evs.add,
		})
		res, err := a.Run(t.Context(), user("hi"))
		if !errors.Is(err, fallback.ErrExhausted) {
			t.Fatalf("err = %v, want ErrExhausted", err)
		}
		ref := evs.of(agent.EventTurnRefused)
		equal(t, "refused events", len(ref), 1)
		equal(t, "refused: turn", ref[0].Turn, 1)
		equal(t, "refused: attempt", ref[0].Attempt, 3)
		equal(t, "refused: last model", ref[0].Model, "b")
		equal(t, "refused: run id", ref[0].RunID, res.RunID)
		equal(t, "refused: err is ErrExhausted", errors.Is(ref[0].Err, fallback.ErrExhausted), true)
		equal(t, "kind name", agent.EventTurnRefused.String(), "turn-refused")
		kinds := evs.kinds()
		equal(t, "last event", kinds[len(kinds)-1], "turn-refused")
	})
}
