package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/internal/fakellm"
)

// benchRequest is a mid-sized turn: a system prompt, a tool round trip and
// two tool specs.
var benchRequest = agent.Request{
	Model: "m",
	Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: "be brief"},
		{Role: agent.RoleUser, Content: "weather?"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
		{Role: agent.RoleTool, ToolCallID: "c1", Content: "sunny"},
	},
	Tools: []agent.ToolSpec{
		{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		{Name: "time"},
	},
}

// BenchmarkComplete measures one Complete call against a loopback fake
// server (SDK encoding, HTTP round trip, decoding, mapping).
func BenchmarkComplete(b *testing.B) {
	srv := fakellm.NewOpenAI(fakellm.Always(fakellm.Calls(fakellm.Call("weather", `{"city":"Rome"}`))))
	defer srv.Close()
	p := newProvider(b, srv.BaseURL(), nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Complete(context.Background(), benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompleteParallel(b *testing.B) {
	srv := fakellm.NewOpenAI(fakellm.Always(fakellm.Text("ok")))
	defer srv.Close()
	p := newProvider(b, srv.BaseURL(), nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Complete(context.Background(), benchRequest); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
