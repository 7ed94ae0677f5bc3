package anthropic_test

import (
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/internal/providertest"
)

// TestRoundTripProperty sends random conversations through the SDK to the
// fake server, which must accept them (its wire rules are the real
// service's) and decode them back to what was sent (see expected).
func TestRoundTripProperty(t *testing.T) { providertest.TestRoundTrip(t, harness) }

// expected is what the fake server decodes from msgs on the Anthropic wire:
// system messages first, in order; the rest in place, with IsError kept and
// empty arguments sent as {}.
func expected(msgs []agent.Message) []llmtest.Message {
	var sys, out []llmtest.Message
	for _, m := range msgs {
		f := llmtest.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, IsError: m.IsError}
		for _, c := range m.ToolCalls {
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			}
			f.ToolCalls = append(f.ToolCalls, llmtest.ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
		}
		if m.Role == agent.RoleSystem {
			sys = append(sys, f)
		} else {
			out = append(out, f)
		}
	}
	return append(sys, out...)
}
