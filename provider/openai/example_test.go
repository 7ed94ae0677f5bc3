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
	// is rate limited, then the prompt is too long for the model.
	srv := llmtest.NewOpenAI(llmtest.Sequence(
		llmtest.Calls(llmtest.ToolCall{ID: "call_1", Name: "search", Arguments: `{"q":"loopctl"}`}),
		llmtest.RateLimit("7"),
		llmtest.Raw(400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
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
	fmt.Println("stop reason:", resp.StopReason)

	_, err = p.Complete(context.Background(), req)
	fmt.Println(retry.Classify(err), err.(*retry.StatusError).RetryAfter)

	// The provider's own message and code are in the error's text.
	_, err = p.Complete(context.Background(), req)
	fmt.Println(err)
	fmt.Println(srv.Count("gpt-4o-mini"), "requests")
	// Output:
	// call_1 search {"q":"loopctl"}
	// stop reason: tool_calls
	// rate-limited 7s
	// retry: HTTP 400 Bad Request: This model's maximum context length is 128000 tokens. (code context_length_exceeded, type invalid_request_error)
	// 3 requests
}
