package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
)

// inProcess answers with one tool call, then with text once it reads the
// tool's result: a two-turn conversation with no I/O, to measure the loop.
type inProcess struct {
	call agent.Response
	done agent.Response
}

func (p *inProcess) Complete(_ context.Context, req agent.Request) (agent.Response, error) {
	if req.Messages[len(req.Messages)-1].Role == agent.RoleTool {
		return p.done, nil
	}
	return p.call, nil
}

func newBenchAgent(b *testing.B) *agent.Agent {
	b.Helper()
	p := &inProcess{
		call: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}}},
		done: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}},
	}
	type echoArgs struct {
		Text string `json:"text"`
	}
	echo, err := agent.NewTool("echo", "echo text", func(_ context.Context, a echoArgs) (string, error) { return a.Text, nil })
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Config{
		Provider: p,
		Models:   fallback.Settings{Primary: "m", Chain: []string{"n"}},
		Tools:    []agent.Tool{echo},
	})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkRun measures one Run of a two-turn conversation with one (typed)
// tool call against an in-process provider: the loop's own overhead.
func BenchmarkRun(b *testing.B) {
	a := newBenchAgent(b)
	msgs := []agent.Message{{Role: agent.RoleUser, Content: "say hi"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Run(ctx, msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunParallel runs the same conversation from many goroutines
// sharing one Agent (and its breakers).
func BenchmarkRunParallel(b *testing.B) {
	a := newBenchAgent(b)
	msgs := []agent.Message{{Role: agent.RoleUser, Content: "say hi"}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Run(context.Background(), msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
