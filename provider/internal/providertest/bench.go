package providertest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
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

// BenchmarkComplete measures one Complete call of a mid-sized turn (a
// system prompt, a tool round trip, two tool specs) answered by a tool
// call, against a loopback fake server: SDK encoding, HTTP round trip,
// decoding and mapping.
func BenchmarkComplete(b *testing.B, h Harness) {
	h.check(b)
	srv := h.NewServer(llmtest.Always(llmtest.Calls(llmtest.Call("weather", `{"city":"Rome"}`))))
	defer srv.Close()
	p := h.NewProvider(b, srv.BaseURL(), nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Complete(context.Background(), benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompleteParallel is [BenchmarkComplete] from b.RunParallel
// goroutines sharing one adapter, with a plain-text answer.
func BenchmarkCompleteParallel(b *testing.B, h Harness) {
	h.check(b)
	srv := h.NewServer(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	p := h.NewProvider(b, srv.BaseURL(), nil)
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
