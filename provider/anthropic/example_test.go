package anthropic_test

import (
	"context"
	"fmt"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/anthropic"
	"github.com/loopctl/loopctl-go/retry"
)

func Example() {
	// A fake Messages server: overloaded once, then it answers, then it
	// rejects a prompt that is too long.
	srv := llmtest.NewAnthropic(llmtest.Sequence(
		llmtest.Error(529),
		llmtest.Reply{Text: "Paris.", Usage: llmtest.Usage{InputTokens: 14, OutputTokens: 2}},
		llmtest.Raw(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`),
	))
	defer srv.Close()

	p, err := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "sk-ant-test"})
	if err != nil {
		panic(err)
	}
	req := agent.Request{
		Model: "claude-sonnet-4-5",
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "Answer in one word."},
			{Role: agent.RoleUser, Content: "Capital of France?"},
		},
	}
	_, err = p.Complete(context.Background(), req)
	fmt.Println(retry.Classify(err))

	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Message.Content, resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.StopReason)
	fmt.Println(srv.Requests()[1].Messages[0].Role, srv.Requests()[1].MaxTokens)

	// The provider's own message and error type are in the error's text.
	_, err = p.Complete(context.Background(), req)
	fmt.Println(retry.Classify(err), err)
	// Output:
	// transient
	// Paris. 14 2 stop
	// system 4096
	// permanent retry: HTTP 400 Bad Request: prompt is too long: 210000 tokens > 200000 maximum (type invalid_request_error)
}
