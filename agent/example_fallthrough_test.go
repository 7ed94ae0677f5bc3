package agent_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
)

// A tripped tool is probed even while its backup is healthy; when the probe
// fails, the same call falls through to the backup and the model reads only
// the backup's answer. A tool marked NotIdempotent would not fall through.
// The tool breakers run on a fake clock, so the cooldown takes no time.
func ExampleTool_fallThrough() {
	srv := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role == "tool" {
			return llmtest.Text("the model read: " + r.Last().Content)
		}
		return llmtest.Calls(llmtest.Call("search", `{"q":"go"}`))
	})
	defer srv.Close()

	type searchArgs struct {
		Q string `json:"q"`
	}
	search, _ := agent.NewTool("search", "web search",
		func(context.Context, searchArgs) (string, error) { return "", errors.New("search is down") })
	mirror, _ := agent.NewTool("search_mirror", "web search (mirror)",
		func(_ context.Context, a searchArgs) (string, error) { return "mirror results for " + a.Q, nil })

	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	provider, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	a, err := agent.New(agent.Config{
		Provider:    provider,
		Models:      fallback.Settings{Primary: "small-model"},
		Tools:       []agent.Tool{search, mirror},
		Backups:     map[string][]string{"search": {"search_mirror"}},
		ToolBreaker: breaker.Settings{FailureThreshold: 1, Now: func() time.Time { return now }},
		OnEvent: func(ev agent.Event) {
			switch {
			case ev.Kind == agent.EventToolCall && ev.FallThrough != "":
				fmt.Printf("call: %s's probe failed, fell through to %s: %s\n", ev.FallThrough, ev.ResolvedTool, ev.Outcome)
			case ev.Kind == agent.EventToolCall:
				fmt.Printf("call: %s ran: %s\n", ev.ResolvedTool, ev.Outcome)
			case ev.Kind == agent.EventToolTransition:
				fmt.Printf("breaker %s: %s -> %s\n", ev.Tool, ev.From, ev.To)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		res, err := a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "search go"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Answer)
		now = now.Add(breaker.DefaultRecoveryDuration) // the cooldown passes
	}
	srv.CloseClientConnections()
	// Output:
	// breaker search: closed -> open
	// call: search ran: error
	// the model read: search is down
	// breaker search: open -> half-open
	// breaker search: half-open -> open
	// call: search's probe failed, fell through to search_mirror: ok
	// the model read: mirror results for go
}

// A prompt the provider rejects as malformed (here OpenAI's
// context_length_exceeded) ends the run with the provider's own message and
// code, and carries no verdict: however often it happens, the model breaker
// is untouched and the next run still goes to the primary.
func ExampleRunError_malformedRequest() {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Raw(400,
		`{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)))
	defer srv.Close()

	provider, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	a, err := agent.New(agent.Config{
		Provider: provider,
		Models:   fallback.Settings{Primary: "small-model", Chain: []string{"backup-model"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 4 { // more than the trip threshold
		_, err = a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "a very long prompt"}})
	}
	fmt.Println(errors.Is(err, agent.ErrTurnFailed))
	fmt.Println(err)
	fmt.Println(a.Models().State(), a.Models().Snapshot().ConsecutiveFailures, srv.Count("backup-model"))
	srv.CloseClientConnections()
	// Output:
	// true
	// agent: turn failed (turn 1, model small-model): retry: HTTP 400 Bad Request: This model's maximum context length is 128000 tokens. (code context_length_exceeded, type invalid_request_error)
	// primary 0 0
}
