package anthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/anthropic"
	"github.com/loopctl/loopctl-go/provider/internal/providertest"
	"github.com/loopctl/loopctl-go/retry"
)

func newProvider(t testing.TB, baseURL string, mod func(*anthropic.Config)) *anthropic.Provider {
	t.Helper()
	c := anthropic.Config{BaseURL: baseURL, APIKey: "test-key"}
	if mod != nil {
		mod(&c)
	}
	p, err := anthropic.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// harness runs the shared provider checks (package providertest) on the
// Anthropic adapter.
var harness = providertest.Harness{
	Name:      "anthropic",
	NewServer: llmtest.NewAnthropic,
	NewProvider: func(t testing.TB, baseURL string, now func() time.Time) agent.Provider {
		return newProvider(t, baseURL, func(c *anthropic.Config) { c.Now = now })
	},
	BadResponse:      anthropic.ErrBadResponse,
	ToolCallIDPrefix: "toolu_",
	Expected:         expected,
}

func TestRequestMapping(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	p := newProvider(t, srv.BaseURL(), nil)

	req := agent.Request{
		Model: "claude-test",
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "be brief"},
			{Role: agent.RoleUser, Content: "weather in Oslo and Rome?"},
			{Role: agent.RoleAssistant, Content: "checking", ToolCalls: []agent.ToolCall{
				{ID: "t1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
				{ID: "t2", Name: "weather", Arguments: json.RawMessage(`{"city": bad`)},
			}},
			{Role: agent.RoleTool, ToolCallID: "t1", ToolName: "weather", Content: "sunny"},
			{Role: agent.RoleTool, ToolCallID: "t2", ToolName: "weather", Content: "bad arguments", IsError: true},
			{Role: agent.RoleUser, Content: "and tomorrow?"},
			{Role: agent.RoleSystem, Content: "answer in English"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "t3", Name: "forecast"}}},
			{Role: agent.RoleTool, ToolCallID: "t3", Content: ""},
		},
		Tools: []agent.ToolSpec{
			{Name: "weather", Description: "current weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)},
			{Name: "forecast"},
		},
	}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	providertest.JSONEqual(t, got[0].Body, `{
		"model": "claude-test",
		"max_tokens": 4096,
		"system": [{"type":"text","text":"be brief"},{"type":"text","text":"answer in English"}],
		"messages": [
			{"role": "user", "content": [{"type":"text","text":"weather in Oslo and Rome?"}]},
			{"role": "assistant", "content": [
				{"type":"text","text":"checking"},
				{"type":"tool_use","id":"t1","name":"weather","input":{"city":"Oslo"}},
				{"type":"tool_use","id":"t2","name":"weather","input":{}}
			]},
			{"role": "user", "content": [
				{"type":"tool_result","tool_use_id":"t1","is_error":false,"content":[{"type":"text","text":"sunny"}]},
				{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"bad arguments"}]},
				{"type":"text","text":"and tomorrow?"}
			]},
			{"role": "assistant", "content": [{"type":"tool_use","id":"t3","name":"forecast","input":{}}]},
			{"role": "user", "content": [{"type":"tool_result","tool_use_id":"t3","is_error":false}]}
		],
		"tools": [
			{"name":"weather","description":"current weather","input_schema":
				{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}},
			{"name":"forecast","input_schema":{"type":"object","properties":{}}}
		]
	}`)
	if h := got[0].Header.Get("Authorization"); h != "Bearer test-key" {
		t.Errorf("Authorization = %q", h)
	}
	if h := got[0].Header.Get("X-Stainless-Retry-Count"); h != "0" {
		t.Errorf("X-Stainless-Retry-Count = %q", h)
	}

	// Request.MaxTokens wins over Config.MaxTokens, which wins over 4096.
	p2 := newProvider(t, srv.BaseURL(), func(c *anthropic.Config) { c.MaxTokens = 99 })
	if _, err := p2.Complete(context.Background(), providertest.UserRequest("m")); err != nil {
		t.Fatal(err)
	}
	r := providertest.UserRequest("m")
	r.MaxTokens = 7
	if _, err := p2.Complete(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if a, b := srv.Requests()[1].MaxTokens, srv.Requests()[2].MaxTokens; a != 99 || b != 7 {
		t.Errorf("max_tokens = %d, %d; want 99, 7", a, b)
	}
}

// A MaxTokens far beyond what the SDK allows without streaming (it computes
// a timeout from it) must still be sent: the provider sets no SDK timeout.
func TestLargeMaxTokens(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	r := providertest.UserRequest("claude-opus-4-0")
	r.MaxTokens = 100000
	if _, err := newProvider(t, srv.BaseURL(), nil).Complete(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func TestResponses(t *testing.T) {
	providertest.TestResponses(t, harness,
		providertest.ResponseCase{
			Name:  "empty content",
			Reply: llmtest.Text(""),
			Want:  agent.Response{Message: agent.Message{Role: agent.RoleAssistant}, StopReason: agent.StopEnd},
		},
	)
}

// TestStopReasons: every stop_reason comes back normalised; the ones with no
// normalised form pass through.
func TestStopReasons(t *testing.T) {
	var cases []providertest.ResponseCase
	for _, tt := range []struct {
		stop string
		want agent.StopReason
	}{
		{"end_turn", agent.StopEnd},
		{"stop_sequence", agent.StopEnd},
		{"max_tokens", agent.StopLength},
		{"model_context_window_exceeded", agent.StopLength},
		{"tool_use", agent.StopToolCalls},
		{"refusal", agent.StopContentFilter},
		{"pause_turn", "pause_turn"},
	} {
		body := `{"id":"msg","type":"message","role":"assistant","model":"m",` +
			`"content":[{"type":"text","text":"cut"}],"stop_reason":"` + tt.stop + `","stop_sequence":null,` +
			`"usage":{"input_tokens":1,"output_tokens":2}}`
		cases = append(cases, providertest.ResponseCase{
			Name:  "stop_reason " + tt.stop,
			Reply: llmtest.Raw(200, body),
			Want: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "cut"},
				Usage: agent.Usage{InputTokens: 1, OutputTokens: 2}, StopReason: tt.want},
		})
	}
	providertest.TestResponses(t, harness, cases...)
}

// TestHTTPErrors runs the shared error cases plus Anthropic's own: 529
// overloaded, an HTML error body, 404, 400 and 413 with the API's message,
// type and code, and a response without content.
func TestHTTPErrors(t *testing.T) {
	now := providertest.Now()
	providertest.TestErrors(t, harness,
		providertest.ErrorCase{Name: "529 overloaded", Reply: llmtest.Error(529), Code: 529, Limit: retry.Overload, Class: retry.Transient},
		providertest.ErrorCase{Name: "529 overloaded_error", Reply: llmtest.Raw(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			Code: 529, Limit: retry.Overload, Class: retry.Transient, Text: []string{"type overloaded_error"}},
		providertest.ErrorCase{Name: "429 rate_limit_error with reset headers", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{
			"Anthropic-Ratelimit-Requests-Remaining": {"12"}, "Anthropic-Ratelimit-Requests-Reset": {now.Add(time.Second).Format(time.RFC3339)},
			"Anthropic-Ratelimit-Output-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Output-Tokens-Reset": {now.Add(40 * time.Second).Format(time.RFC3339)}}}},
			Code: 429, RetryAfter: 40 * time.Second, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "429 Retry-After hides the resets", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After": {"3"},
			"Anthropic-Ratelimit-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Tokens-Reset": {now.Add(40 * time.Second).Format(time.RFC3339)}}}},
			Code: 429, RetryAfter: 3 * time.Second, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "502 HTML body", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 502, Body: "<html>bad gateway</html>"}}, Code: 502, Class: retry.Transient},
		providertest.ErrorCase{Name: "429 Retry-After date", Reply: llmtest.RateLimit(now.Add(time.Minute).Format(http.TimeFormat)), Code: 429, RetryAfter: time.Minute, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "404", Reply: llmtest.Error(404), Code: 404, Class: retry.Permanent, Text: []string{"(type not_found_error)"}},
		providertest.ErrorCase{Name: "400 prompt too long", Reply: llmtest.Raw(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum","details":{"error_code":"prompt_too_long"}},"request_id":"req_1"}`),
			Code: 400, Class: retry.Permanent, Text: []string{"retry: HTTP 400 Bad Request: prompt is too long: 210000 tokens > 200000 maximum (code prompt_too_long, type invalid_request_error)"}},
		providertest.ErrorCase{Name: "413", Reply: llmtest.Raw(413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`),
			Code: 413, Class: retry.Permanent, Text: []string{"retry: HTTP 413 Request Entity Too Large: Request exceeds the maximum allowed number of bytes. (type request_too_large)"}},
		providertest.ErrorCase{Name: "no content", Reply: llmtest.Raw(200, `{"id":"msg","type":"message"}`), Class: retry.Transient, Bad: true},
		providertest.ErrorCase{Name: "JSON of the wrong shape", Reply: llmtest.Raw(200, `"hello"`), Class: retry.Transient, Bad: true},
	)
}

func TestContextEnds(t *testing.T)     { providertest.TestContextEnds(t, harness) }
func TestRealDeadline(t *testing.T)    { providertest.TestRealDeadline(t, harness) }
func TestConnectionError(t *testing.T) { providertest.TestConnectionError(t, harness) }
func TestConcurrentUse(t *testing.T)   { providertest.TestConcurrentUse(t, harness) }

func TestBadRequests(t *testing.T) {
	providertest.TestBadRequests(t, harness, map[string]agent.Request{
		"bad schema":   {Model: "m", Tools: []agent.ToolSpec{{Name: "t", Parameters: json.RawMessage(`"x"`)}}},
		"bad required": {Model: "m", Tools: []agent.ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"required":"x"}`)}}},
	})
	if _, err := anthropic.New(anthropic.Config{MaxTokens: -1}); err == nil {
		t.Error("New accepted MaxTokens -1")
	}
}
