package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/internal/fakellm"
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

func userReq(model string) agent.Request {
	return agent.Request{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}
}

// jsonEqual compares two JSON documents semantically.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

func TestRequestMapping(t *testing.T) {
	srv := fakellm.NewOpenAI(fakellm.Always(fakellm.Text("ok")))
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
	jsonEqual(t, got[0].Body, `{
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
	r := userReq("m")
	r.MaxTokens = 7
	if _, err := p2.Complete(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, srv.Requests()[1].Body, `{"model":"m","max_tokens":7,"messages":[{"role":"user","content":"hi"}]}`)
}

func TestResponses(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		want  agent.Response
	}{
		{
			name:  "text",
			reply: fakellm.Reply{Text: "hello", Usage: fakellm.Usage{InputTokens: 12, OutputTokens: 3}},
			want: agent.Response{
				Message: agent.Message{Role: agent.RoleAssistant, Content: "hello"},
				Usage:   agent.Usage{InputTokens: 12, OutputTokens: 3},
			},
		},
		{
			name: "two tool calls in order",
			reply: fakellm.Reply{Text: "let me look", ToolCalls: []fakellm.ToolCall{
				{ID: "call_b", Name: "search", Arguments: `{"q":"go"}`},
				{ID: "call_a", Name: "fetch", Arguments: `{"url":"x"}`},
			}, Usage: fakellm.Usage{InputTokens: 20, OutputTokens: 9}},
			want: agent.Response{
				Message: agent.Message{Role: agent.RoleAssistant, Content: "let me look", ToolCalls: []agent.ToolCall{
					{ID: "call_b", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)},
					{ID: "call_a", Name: "fetch", Arguments: json.RawMessage(`{"url":"x"}`)},
				}},
				Usage: agent.Usage{InputTokens: 20, OutputTokens: 9},
			},
		},
		{
			name:  "invalid arguments kept verbatim",
			reply: fakellm.Calls(fakellm.ToolCall{ID: "c", Name: "search", Arguments: `{"q": "unterminated`}),
			want: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "c", Name: "search", Arguments: json.RawMessage(`{"q": "unterminated`)},
			}}},
		},
		{
			name:  "empty arguments stay empty",
			reply: fakellm.Calls(fakellm.ToolCall{ID: "c", Name: "now"}),
			want: agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "c", Name: "now"},
			}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.NewOpenAI(fakellm.Always(tt.reply))
			defer srv.Close()
			got, err := newProvider(t, srv.BaseURL(), nil).Complete(context.Background(), userReq("m"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMissingToolCallID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
			{"type":"function","function":{"name":"a","arguments":"{}"}},
			{"type":"function","function":{"name":"b","arguments":"{}"}}]}}]}`))
	}))
	defer srv.Close()
	got, err := newProvider(t, srv.URL, nil).Complete(context.Background(), userReq("m"))
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Message.ToolCalls; len(c) != 2 || c[0].ID != "call_0" || c[1].ID != "call_1" {
		t.Errorf("tool calls = %+v, want ids call_0, call_1", c)
	}
}

func TestHTTPErrors(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		reply      fakellm.Reply
		code       int // 0: not a StatusError
		retryAfter time.Duration
		class      retry.Class
		bad        bool // wraps ErrBadResponse
	}{
		{name: "500", reply: fakellm.Error(500), code: 500, class: retry.Transient},
		{name: "503 text body", reply: fakellm.Reply{Fault: &fakellm.Fault{Status: 503, Body: "upstream connect error"}}, code: 503, class: retry.Transient},
		{name: "429 Retry-After seconds", reply: fakellm.RateLimit("7"), code: 429, retryAfter: 7 * time.Second, class: retry.RateLimited},
		{name: "429 Retry-After date", reply: fakellm.RateLimit(now.Add(90 * time.Second).Format(http.TimeFormat)), code: 429, retryAfter: 90 * time.Second, class: retry.RateLimited},
		{name: "429 retry-after-ms", reply: fakellm.Reply{Fault: &fakellm.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}}}, code: 429, retryAfter: 1500 * time.Millisecond, class: retry.RateLimited},
		{name: "429 no hint", reply: fakellm.RateLimit(""), code: 429, class: retry.RateLimited},
		{name: "400", reply: fakellm.Error(400), code: 400, class: retry.Permanent},
		{name: "401", reply: fakellm.Error(401), code: 401, class: retry.Permanent},
		{name: "408", reply: fakellm.Error(408), code: 408, class: retry.Transient},
		{name: "malformed JSON", reply: fakellm.Malformed(), class: retry.Transient, bad: true},
		{name: "empty body", reply: fakellm.Raw(200, ""), class: retry.Transient, bad: true},
		{name: "no choices", reply: fakellm.Raw(200, `{"id":"x","choices":[]}`), class: retry.Transient, bad: true},
		{name: "JSON of the wrong shape", reply: fakellm.Raw(200, `[1,2,3]`), class: retry.Transient, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.NewOpenAI(fakellm.Always(tt.reply))
			defer srv.Close()
			p := newProvider(t, srv.BaseURL(), func(c *openai.Config) { c.Now = func() time.Time { return now } })
			_, err := p.Complete(context.Background(), userReq("m"))
			if err == nil {
				t.Fatal("no error")
			}
			if n := srv.Count(""); n != 1 {
				t.Errorf("%d HTTP requests, want exactly 1 (SDK retries must be off)", n)
			}
			if c := retry.Classify(err); c != tt.class {
				t.Errorf("Classify = %v, want %v (err: %v)", c, tt.class, err)
			}
			if got := errors.Is(err, openai.ErrBadResponse); got != tt.bad {
				t.Errorf("errors.Is(err, ErrBadResponse) = %v, want %v (err: %v)", got, tt.bad, err)
			}
			var se *retry.StatusError
			if !errors.As(err, &se) {
				if tt.code != 0 {
					t.Fatalf("not a StatusError: %v", err)
				}
				return
			}
			if se.Code != tt.code || se.RetryAfter != tt.retryAfter {
				t.Errorf("StatusError{Code: %d, RetryAfter: %v}, want {%d, %v}", se.Code, se.RetryAfter, tt.code, tt.retryAfter)
			}
		})
	}
}

// manualCtx is a context whose deadline "passes" when expire is called, so
// a test can cut a hanging request without waiting for a clock.
type manualCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	err  error
}

func newManualCtx(err error) *manualCtx {
	return &manualCtx{Context: context.Background(), done: make(chan struct{}), err: err}
}
func (c *manualCtx) expire() { c.once.Do(func() { close(c.done) }) }
func (c *manualCtx) Deadline() (time.Time, bool) {
	return time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), c.err == context.DeadlineExceeded
}
func (c *manualCtx) Done() <-chan struct{} { return c.done }
func (c *manualCtx) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func TestContextEnds(t *testing.T) {
	for _, want := range []error{context.DeadlineExceeded, context.Canceled} {
		t.Run(want.Error(), func(t *testing.T) {
			ctx := newManualCtx(want)
			srv := fakellm.NewOpenAI(func(fakellm.Request) fakellm.Reply {
				ctx.expire() // the deadline passes while the server hangs
				return fakellm.Hang()
			})
			defer srv.Close()
			_, err := newProvider(t, srv.BaseURL(), nil).Complete(ctx, userReq("m"))
			if !errors.Is(err, want) {
				t.Fatalf("err = %v, want errors.Is %v", err, want)
			}
			if srv.Count("") != 1 {
				t.Errorf("%d requests, want 1", srv.Count(""))
			}
		})
	}
}

func TestRealDeadline(t *testing.T) {
	// One short real deadline, to check the whole stack with a genuine
	// context.WithTimeout (no sleep: the server hangs until the client gives up).
	srv := fakellm.NewOpenAI(fakellm.Always(fakellm.Hang()))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := newProvider(t, srv.BaseURL(), nil).Complete(ctx, userReq("m"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
}

func TestConnectionError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	_, err := newProvider(t, url, nil).Complete(context.Background(), userReq("m"))
	if err == nil {
		t.Fatal("no error")
	}
	var se *retry.StatusError
	if errors.As(err, &se) || errors.Is(err, openai.ErrBadResponse) {
		t.Errorf("connection error became %v", err)
	}
	if c := retry.Classify(err); c != retry.Transient {
		t.Errorf("Classify = %v, want transient", c)
	}
}

func TestBadRequests(t *testing.T) {
	srv := fakellm.NewOpenAI(fakellm.Always(fakellm.Text("ok")))
	defer srv.Close()
	p := newProvider(t, srv.BaseURL(), nil)
	for name, req := range map[string]agent.Request{
		"no model":       {Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}},
		"bad schema":     {Model: "m", Tools: []agent.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
		"unknown role":   {Model: "m", Messages: []agent.Message{{Role: "narrator"}}},
		"negative limit": {Model: "m", MaxTokens: -1},
	} {
		_, err := p.Complete(context.Background(), req)
		if retry.Classify(err) != retry.Permanent {
			t.Errorf("%s: err = %v, want a permanent error", name, err)
		}
	}
	if srv.Count("") != 0 {
		t.Errorf("%d requests sent, want 0", srv.Count(""))
	}
	if _, err := openai.New(openai.Config{MaxTokens: -1}); err == nil {
		t.Error("New accepted MaxTokens -1")
	}
}

func TestConcurrentUse(t *testing.T) {
	srv := fakellm.NewOpenAI(func(r fakellm.Request) fakellm.Reply { return fakellm.Text(r.Model) })
	defer srv.Close()
	p := newProvider(t, srv.BaseURL(), nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			model := string(rune('a' + i))
			resp, err := p.Complete(context.Background(), userReq(model))
			if err != nil || resp.Message.Content != model {
				t.Errorf("model %s: %+v, %v", model, resp, err)
			}
		})
	}
	wg.Wait()
	if srv.Count("") != 8 {
		t.Errorf("%d requests, want 8", srv.Count(""))
	}
}
