package wire

import "testing"

// TestUsageArithmetic: OpenAI prompt tokens include cached ones, Anthropic
// input tokens do not; nothing is counted twice or dropped (GATEWAY §8.4).
func TestUsageArithmetic(t *testing.T) {
	tests := []struct {
		name                            string
		usage                           Usage
		wantPrompt, wantTotal           int
		wantMessagesInput, wantCacheHit int
	}{
		{name: "from openai", usage: usageFromOpenAI(100, 40, 7, 2),
			wantPrompt: 100, wantTotal: 107, wantMessagesInput: 60, wantCacheHit: 40},
		{name: "from messages", usage: usageFromMessages(10, 20, 3, 5),
			wantPrompt: 33, wantTotal: 38, wantMessagesInput: 10, wantCacheHit: 20},
		{name: "cached over prompt", usage: usageFromOpenAI(10, 40, 1, 0),
			wantPrompt: 10, wantTotal: 11, wantMessagesInput: 0, wantCacheHit: 10},
		{name: "negative counts", usage: usageFromOpenAI(-1, -1, -1, -1),
			wantPrompt: 0, wantTotal: 0, wantMessagesInput: 0, wantCacheHit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r, m := tt.usage.chatUsage(), tt.usage.responsesUsage(), tt.usage.messagesUsage()
			if c.PromptTokens != tt.wantPrompt || c.TotalTokens != tt.wantTotal || c.PromptTokensDetails.CachedTokens != tt.wantCacheHit {
				t.Errorf("chat usage %+v, want prompt %d total %d cached %d", c, tt.wantPrompt, tt.wantTotal, tt.wantCacheHit)
			}
			if r.InputTokens != tt.wantPrompt || r.TotalTokens != tt.wantTotal || r.InputTokensDetails.CachedTokens != tt.wantCacheHit {
				t.Errorf("responses usage %+v, want input %d total %d cached %d", r, tt.wantPrompt, tt.wantTotal, tt.wantCacheHit)
			}
			if m.InputTokens != tt.wantMessagesInput || m.CacheReadInputTokens != tt.wantCacheHit {
				t.Errorf("messages usage %+v, want input %d cache read %d", m, tt.wantMessagesInput, tt.wantCacheHit)
			}
			if back := c.neutral(); back.openAIPrompt() != tt.usage.openAIPrompt() || back.Output != tt.usage.Output {
				t.Errorf("chat round trip %+v, want %+v", back, tt.usage)
			}
			want := tt.usage
			want.Reasoning = 0 // Messages has no reasoning count
			if back := m.neutral(); back != want {
				t.Errorf("messages round trip %+v, want %+v", back, tt.usage)
			}
		})
	}
}

// TestStopMappers: every wire's stop reason to the neutral form and back.
func TestStopMappers(t *testing.T) {
	tests := []struct {
		name        string
		stop        Stop
		messages    string
		chat        string
		status, why string
	}{
		{name: "end_turn", stop: stopFromMessages("end_turn"), messages: "end_turn", chat: "stop", status: "completed"},
		{name: "pause_turn", stop: stopFromMessages("pause_turn"), messages: "end_turn", chat: "stop", status: "completed"},
		{name: "stop_sequence", stop: stopFromMessages("stop_sequence"), messages: "stop_sequence", chat: "stop", status: "completed"},
		{name: "max_tokens", stop: stopFromMessages("max_tokens"), messages: "max_tokens", chat: "length", status: "incomplete", why: "max_output_tokens"},
		{name: "context window", stop: stopFromMessages("model_context_window_exceeded"), messages: "model_context_window_exceeded", chat: "length", status: "incomplete", why: "max_output_tokens"},
		{name: "tool_use", stop: stopFromMessages("tool_use"), messages: "tool_use", chat: "tool_calls", status: "completed"},
		{name: "refusal", stop: stopFromMessages("refusal"), messages: "refusal", chat: "content_filter", status: "incomplete", why: "content_filter"},
		{name: "chat stop with a call", stop: stopFromChat("stop", true), messages: "tool_use", chat: "tool_calls", status: "completed"},
		{name: "chat tool_calls without one", stop: stopFromChat("tool_calls", false), messages: "end_turn", chat: "stop", status: "completed"},
		{name: "chat length", stop: stopFromChat("length", true), messages: "max_tokens", chat: "length", status: "incomplete", why: "max_output_tokens"},
		{name: "chat content_filter", stop: stopFromChat("content_filter", false), messages: "refusal", chat: "content_filter", status: "incomplete", why: "content_filter"},
		{name: "responses completed with a call", stop: stopFromResponses("completed", "", true), messages: "tool_use", chat: "tool_calls", status: "completed"},
		{name: "responses max_output_tokens", stop: stopFromResponses("incomplete", "max_output_tokens", false), messages: "max_tokens", chat: "length", status: "incomplete", why: "max_output_tokens"},
		{name: "responses content_filter", stop: stopFromResponses("incomplete", "content_filter", false), messages: "refusal", chat: "content_filter", status: "incomplete", why: "content_filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, why := tt.stop.responses()
			if tt.stop.messages() != tt.messages || tt.stop.chat() != tt.chat || status != tt.status || why != tt.why {
				t.Errorf("got %s, %s, %s(%s); want %s, %s, %s(%s)", tt.stop.messages(), tt.stop.chat(), status, why,
					tt.messages, tt.chat, tt.status, tt.why)
			}
		})
	}
}
