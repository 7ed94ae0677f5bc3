package agent_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
)

// A complete agent with two tools, against a scripted OpenAI-compatible
// server: the model asks for the weather and the time in parallel, reads both
// results, and answers.
func Example() {
	srv := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role != "tool" {
			return llmtest.Calls(
				llmtest.Call("weather", `{"city":"Oslo"}`),
				llmtest.Call("clock", `{"zone":"Europe/Oslo"}`),
			)
		}
		var facts []string
		for _, m := range r.Messages {
			if m.Role == "tool" {
				facts = append(facts, m.Content)
			}
		}
		return llmtest.Text("In Oslo: " + strings.Join(facts, "; "))
	})
	defer srv.Close()

	type weatherArgs struct {
		City string `json:"city" desc:"the city"`
	}
	weather, _ := agent.NewTool("weather", "current weather in a city",
		func(_ context.Context, a weatherArgs) (string, error) { return "4°C and windy in " + a.City, nil })
	type clockArgs struct {
		Zone string `json:"zone" desc:"an IANA time zone"`
	}
	clock, _ := agent.NewTool("clock", "the local time in a zone",
		func(_ context.Context, a clockArgs) (string, error) { return "it is 09:30 in " + a.Zone, nil })

	provider, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	a, err := agent.New(agent.Config{
		Provider: provider,
		Models:   fallback.Settings{Primary: "small-model", Chain: []string{"backup-model"}},
		Tools:    []agent.Tool{weather, clock},
		OnEvent: func(ev agent.Event) {
			if ev.Kind == agent.EventToolCall {
				fmt.Printf("tool %s: %s\n", ev.Tool, ev.Outcome)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Run(context.Background(), []agent.Message{
		{Role: agent.RoleUser, Content: "What is it like in Oslo right now?"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Answer)
	fmt.Println("turns:", res.Turns, "messages:", len(res.Messages), "model:", res.Attempts[len(res.Attempts)-1].Model,
		"stop:", res.StopReason)
	srv.CloseClientConnections()

	// Unordered output:
	// tool weather: ok
	// tool clock: ok
	// In Oslo: 4°C and windy in Oslo; it is 09:30 in Europe/Oslo
	// turns: 2 messages: 5 model: small-model stop: stop
}
