package openai_test

import (
	"context"
	"fmt"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

func Example() {
	// A fake OpenAI-compatible server: the first turn calls a tool, then it
	// is rate limited.
	srv := llmtest.NewOpenAI(llmtest.Sequence(
		llmtest.Calls(llmtest.ToolCall{ID: "call_1", Name: "search", Arguments: `{"q":"loopctl"}`}),
		llmtest.RateLimit("7"),
	))
	defer srv.Close()

	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "sk-test"})
	if err != nil {
		panic(err)
	}
	req := agent.Request{
		Model:    "gpt-4o-mini",
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "find loopctl"}},
		Tools:    []agent.ToolSpec{{Name: "search", Description: "web search"}},
	}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		panic(err)
	}
	for _, c := range resp.Message.ToolCalls {
		fmt.Println(c.ID, c.Name, string(c.Arguments))
	}

	_, err = p.Complete(context.Background(), req)
	fmt.Println(retry.Classify(err), err.(*retry.StatusError).RetryAfter)
	fmt.Println(srv.Count("gpt-4o-mini"), "requests")
	// Output:
	// call_1 search {"q":"loopctl"}
	// rate-limited 7s
	// 2 requests
}
