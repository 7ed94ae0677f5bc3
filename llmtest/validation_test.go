package llmtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// Requests that break the wire format's rules get the 400 a real server
// sends; the script is not called, the request is logged.
func TestValidation(t *testing.T) {
	tests := []struct {
		name      string
		anthropic bool
		body      string
		want      string // part of the error message
	}{
		{"openai no model", false, `{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"openai no messages", false, `{"model":"m","messages":[]}`, "at least one message"},
		{"openai orphan tool result", false, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"r"}]}`, "c9"},
		{"openai unanswered call", false, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"x"}]}`, "c1"},
		{"openai unanswered last call", false, `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "c1"},
		{"openai empty assistant", false, `{"model":"m","messages":[{"role":"assistant","content":""}]}`, "content or tool_calls"},
		{"openai bad role", false, `{"model":"m","messages":[{"role":"bot","content":"x"}]}`, "role"},
		{"openai bad tool", false, `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":[1]}}]}`, "parameters"},
		{"anthropic no max_tokens", true, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "max_tokens"},
		{"anthropic starts with assistant", true, `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":"x"}]}`, "first message"},
		{"anthropic results split over two messages", true, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"},
			{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"f","input":{}},{"type":"tool_use","id":"u2","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"u1"}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"u2"}]}]}`, "u2"},
		{"anthropic text before result", true, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"},
			{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"text","text":"hm"},{"type":"tool_result","tool_use_id":"u1"}]}]}`, "come before"},
		{"anthropic empty text", true, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "non-empty"},
		{"anthropic input not object", true, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"},
			{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"f","input":"s"}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"u1"}]}]}`, "dictionary"},
		{"anthropic schema not object", true, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"string"}}]}`, "input_schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			script := func(llmtest.Request) llmtest.Reply { called = true; return llmtest.Text("ok") }
			srv := llmtest.NewOpenAI(script)
			if tt.anthropic {
				srv.Close()
				srv = llmtest.NewAnthropic(script)
			}
			defer srv.Close()
			status, _, body := post(t, context.Background(), srv, tt.body)
			if status != 400 || !strings.Contains(body, tt.want) {
				t.Errorf("status %d body %s; want 400 mentioning %q", status, body, tt.want)
			}
			if called {
				t.Error("script called for an invalid request")
			}
			if srv.Count("") != 1 {
				t.Errorf("Count = %d, want 1", srv.Count(""))
			}
		})
	}
}
