package demo

import (
	"net/http"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// conv builds a conversation: the user prompt, then for each result one
// assistant tool call and its tool result.
func conv(prompt string, calls []string, results ...string) []llmtest.Message {
	msgs := []llmtest.Message{{Role: "system", Content: system}, {Role: "user", Content: prompt}}
	for i, r := range results {
		msgs = append(msgs,
			llmtest.Message{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: calls[i]}}},
			llmtest.Message{Role: "tool", Content: r, ToolCallID: "c"})
	}
	return msgs
}

func TestScriptedModel(t *testing.T) {
	const p = "find and compute"
	plans := map[string][]step{p: {searchStep("circuit breaker"), calcStep("6 * 7")}}
	const (
		found   = `{"source":"the index","results":[{"title":"Circuit breaker","snippet":"..."}]}`
		failed  = "search: down"
		refused = "tool temporarily unavailable: circuit breaker open for tool 'search'"
		calc    = `{"expression":"6 * 7","result":42}`
	)
	s, c := toolSearch, toolCalculator
	tests := []struct {
		name    string
		calls   []string
		results []string
		call    string // the tool called next; "" for an answer
		answer  string
	}{
		{"first turn", nil, nil, s, ""},
		{"after a result", []string{s}, []string{found}, c, ""},
		{"answer", []string{s, c}, []string{found, calc}, "",
			`search "circuit breaker": "Circuit breaker" (from the index); 6 * 7 = 42.`},
		{"retry a failure", []string{s}, []string{failed}, s, ""},
		{"third retry", []string{s, s, s}, []string{failed, failed, failed}, s, ""},
		{"give up after 4 tries", []string{s, s, s, s}, []string{failed, failed, failed, failed}, c, ""},
		{"gave up", []string{s, s, s, s, c}, []string{failed, failed, failed, failed, calc}, "",
			`search "circuit breaker": failed 4 times, skipped; 6 * 7 = 42.`},
		{"refusal is not retried", []string{s}, []string{refused}, c, ""},
		{"refusal read", []string{s, c}, []string{refused, calc}, "",
			`search "circuit breaker": unavailable (circuit breaker open), skipped; 6 * 7 = 42.`},
		{"recovered after failures", []string{s, s, c}, []string{failed, found, calc}, "",
			`search "circuit breaker": "Circuit breaker" (from the index); 6 * 7 = 42.`},
	}
	for _, tt := range tests {
		r := answer(conv(p, tt.calls, tt.results...), plans)
		switch {
		case tt.call != "" && (len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != tt.call || r.Text != ""):
			t.Errorf("%s: reply %+v, want a call of %s", tt.name, r, tt.call)
		case tt.call == "" && (len(r.ToolCalls) != 0 || r.Text != tt.answer):
			t.Errorf("%s: reply %+v, want the answer %q", tt.name, r, tt.answer)
		}
	}
	if r := answer(conv("unknown prompt", nil), plans); r.Text != "Done." {
		t.Errorf("a prompt without a plan: %+v", r)
	}
}

func TestModelFaults(t *testing.T) {
	f := newFaults()
	script := modelScript(f, plans())
	req := llmtest.Request{Model: modelPrimary, Messages: conv(story[0].runs[0].text, nil)}
	if r := script(req); r.Fault != nil || len(r.ToolCalls) != 1 {
		t.Fatalf("healthy reply %+v", r)
	}
	f.setModel(modelPrimary, http.StatusInternalServerError)
	if r := script(req); r.Fault == nil || r.Fault.Status != 500 || !strings.Contains(r.Fault.Message, "scripted outage") {
		t.Errorf("outage reply %+v", r)
	}
	f.setModel(modelPrimary, http.StatusTooManyRequests)
	if r := script(req); r.Fault == nil || r.Fault.Status != 429 || r.Fault.Header.Get("Retry-After") != "1" {
		t.Errorf("rate-limit reply %+v", r)
	}
	f.setModel(modelPrimary, 0)
	if r := script(req); r.Fault != nil {
		t.Errorf("fixed reply %+v", r)
	}
}
