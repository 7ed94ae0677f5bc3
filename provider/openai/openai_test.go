package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/internal/providertest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

func newProvider(t testing.TB, baseURL string, mod func(*openai.Config)) *openai.Provider {
	t.Helper()
	c := openai.Config{BaseURL: baseURL, APIKey: "test-key"}
	if mod != nil {
		mod(&c)
	}
	p, err := openai.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// harness runs the shared provider checks (package providertest) on the
// OpenAI adapter.
var harness = providertest.Harness{
	Name:      "openai",
	NewServer: llmtest.NewOpenAI,
	NewProvider: func(t testing.TB, baseURL string, now func() time.Time) agent.Provider {
		return newProvider(t, baseURL, func(c *openai.Config) { c.Now = now })
	},
	BadResponse:      openai.ErrBadResponse,
	ToolCallIDPrefix: "call_",
	Expected:         expected,
	FillsToolCallIDs: true,
}

func TestRequestMapping(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	p := newProvider(t, srv.BaseURL(), func(c *openai.Config) { c.MaxTokens = 99 })

	req := agent.Request{
		Model: "gpt-test",
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "be brief"},
			{Role: agent.RoleUser, Content: "weather in Oslo and Rome?"},
			{Role: agent.RoleAssistant, Content: "checking", ToolCalls: []agent.ToolCall{
				{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
				{ID: "c2", Name: "weather"},
			}},
			{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "weather", Content: "sunny"},
			{Role: agent.RoleTool, ToolCallID: "c2", ToolName: "weather", Content: "tool temporarily unavailable", IsError: true},
			{Role: agent.RoleAssistant}, // empty: left out
		},
		Tools: []agent.ToolSpec{
			{Name: "weather", Description: "current weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "noargs"},
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
		"model": "gpt-test",
		"max_completion_tokens": 99,
		"messages": [
			{"role": "system", "content": "be brief"},
			{"role": "user", "content": "weather in Oslo and Rome?"},
			{"role": "assistant", "content": "checking", "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
				{"id": "c2", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "c1", "content": "sunny"},
			{"role": "tool", "tool_call_id": "c2", "content": "tool temporarily unavailable"}
		],
		"tools": [
			{"type": "function", "function": {"name": "weather", "description": "current weather",
				"parameters": {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
			{"type": "function", "function": {"name": "noargs"}}
		]
	}`)
	if h := got[0].Header.Get("Authorization"); h != "Bearer test-key" {
		t.Errorf("Authorization = %q", h)
	}

	// Request.MaxTokens wins over Config.MaxTokens; LegacyMaxTokens renames it.
	p2 := newProvider(t, srv.BaseURL(), func(c *openai.Config) { c.MaxTokens = 99; c.LegacyMaxTokens = true })
	r := providertest.UserRequest("m")
	r.MaxTokens = 7
	if _, err := p2.Complete(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	providertest.JSONEqual(t, srv.Requests()[1].Body, `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":"hi"}]}`)
}

func TestResponses(t *testing.T) {
	providertest.TestResponses(t, harness,
		providertest.ResponseCase{
			Name:  "invalid arguments kept verbatim",
			Reply: llmtest.Calls(llmtest.ToolCall{ID: "c", Name: "search", Arguments: `{"q": "unterminated`}),
			Want: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "c", Name: "search", Arguments: json.RawMessage(`{"q": "unterminated`)},
			}}, StopReason: agent.StopToolCalls},
		},
		providertest.ResponseCase{
			Name:  "empty arguments stay empty",
			Reply: llmtest.Calls(llmtest.ToolCall{ID: "c", Name: "now"}),
			Want: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "c", Name: "now"},
			}}, StopReason: agent.StopToolCalls},
		},
	)
}

// TestStopReasons: every finish_reason comes back normalised; unknown ones
// pass through.
func TestStopReasons(t *testing.T) {
	var cases []providertest.ResponseCase
	for _, tt := range []struct {
		finish string
		want   agent.StopReason
	}{
		{"stop", agent.StopEnd},
		{"length", agent.StopLength},
		{"tool_calls", agent.StopToolCalls},
		{"function_call", agent.StopToolCalls},
		{"content_filter", agent.StopContentFilter},
		{"something_new", "something_new"},
		{"", ""},
	} {
		body := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,` +
			`"message":{"role":"assistant","content":"cut"},"finish_reason":"` + tt.finish + `"}],` +
			`"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`
		cases = append(cases, providertest.ResponseCase{
			Name:  "finish_reason " + tt.finish,
			Reply: llmtest.Raw(200, body),
			Want: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "cut"},
				Usage: agent.Usage{InputTokens: 1, OutputTokens: 2}, StopReason: tt.want},
		})
	}
	providertest.TestResponses(t, harness, cases...)
}

func TestMissingToolCallID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
			{"type":"function","function":{"name":"a","arguments":"{}"}},
			{"type":"function","function":{"name":"b","arguments":"{}"}}]}}]}`))
	}))
	defer srv.Close()
	got, err := newProvider(t, srv.URL, nil).Complete(context.Background(), providertest.UserRequest("m"))
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Message.ToolCalls; len(c) != 2 || c[0].ID != "call_0" || c[1].ID != "call_1" {
		t.Errorf("tool calls = %+v, want ids call_0, call_1", c)
	}
}

// TestHTTPErrors runs the shared error cases plus OpenAI's own: a text
// error body, retry-after-ms (which wins over Retry-After), 401, 408 and a
// response without choices.
func TestHTTPErrors(t *testing.T) {
	now := providertest.Now()
	providertest.TestErrors(t, harness,
		providertest.ErrorCase{Name: "503 text body", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 503, Body: "upstream connect error"}}, Code: 503, Class: retry.Transient},
		providertest.ErrorCase{Name: "429 Retry-After date", Reply: llmtest.RateLimit(now.Add(90 * time.Second).Format(http.TimeFormat)), Code: 429, RetryAfter: 90 * time.Second, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "429 retry-after-ms", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}}}}, Code: 429, RetryAfter: 1500 * time.Millisecond, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "429 retry-after-ms and Retry-After: the later", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}}}, Code: 429, RetryAfter: 2 * time.Second, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "429 reset of the exhausted limit", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{
			"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"1m30.5s"}, "X-Ratelimit-Remaining-Tokens": {"100"}, "X-Ratelimit-Reset-Tokens": {"20ms"}}}},
			Code: 429, RetryAfter: 90500 * time.Millisecond, Limit: retry.Throttle, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "429 insufficient_quota", Reply: llmtest.Raw(429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			Code: 429, Limit: retry.Quota, Class: retry.RateLimited, Text: []string{"code insufficient_quota"}},
		providertest.ErrorCase{Name: "403 billing_not_active", Reply: llmtest.Raw(403, `{"error":{"message":"Your account is not active.","type":"billing_not_active","param":null,"code":"billing_not_active"}}`),
			Code: 403, Limit: retry.Quota, Class: retry.Permanent},
		providertest.ErrorCase{Name: "429 RESOURCE_EXHAUSTED quota (Google-style status)", Reply: llmtest.Raw(429, `{"error":{"code":429,"message":"Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests","status":"RESOURCE_EXHAUSTED"}}`),
			Code: 429, Limit: retry.Quota, Class: retry.RateLimited},
		providertest.ErrorCase{Name: "503 overloaded", Reply: llmtest.Raw(503, `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`),
			Code: 503, Limit: retry.Overload, Class: retry.Transient},
		providertest.ErrorCase{Name: "400 context_length_exceeded", Reply: llmtest.Raw(400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			Code: 400, Class: retry.Permanent, Text: []string{"retry: HTTP 400 Bad Request: This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. (code context_length_exceeded, type invalid_request_error)"}},
		providertest.ErrorCase{Name: "408", Reply: llmtest.Error(408), Code: 408, Class: retry.Transient},
		providertest.ErrorCase{Name: "no choices", Reply: llmtest.Raw(200, `{"id":"x","choices":[]}`), Class: retry.Transient, Bad: true},
		providertest.ErrorCase{Name: "JSON of the wrong shape", Reply: llmtest.Raw(200, `[1,2,3]`), Class: retry.Transient, Bad: true},
	)
}

func TestContextEnds(t *testing.T)     { providertest.TestContextEnds(t, harness) }
func TestRealDeadline(t *testing.T)    { providertest.TestRealDeadline(t, harness) }
func TestConnectionError(t *testing.T) { providertest.TestConnectionError(t, harness) }
func TestConcurrentUse(t *testing.T)   { providertest.TestConcurrentUse(t, harness) }

func TestBadRequests(t *testing.T) {
	providertest.TestBadRequests(t, harness, map[string]agent.Request{
		"bad schema": {Model: "m", Tools: []agent.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
	})
	if _, err := openai.New(openai.Config{MaxTokens: -1}); err == nil {
		t.Error("New accepted MaxTokens -1")
	}
}
