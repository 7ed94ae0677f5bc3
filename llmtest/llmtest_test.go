package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// post sends body to the server's endpoint and returns status, headers and body.
func post(t *testing.T, ctx context.Context, srv *llmtest.Server, body string) (int, http.Header, string) {
	t.Helper()
	url := srv.URL + "/v1/messages"
	if strings.HasSuffix(srv.BaseURL(), "/v1") {
		url = srv.URL + "/v1/chat/completions"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(b)
}

func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

const oaUser = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
const anUser = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`

func TestOpenAIReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"text", llmtest.Reply{Text: "hello", Usage: llmtest.Usage{InputTokens: 3, OutputTokens: 2, CachedTokens: 4}}, `{
			"id":"chatcmpl-fake-1","object":"chat.completion","created":1700000000,"model":"m",
			"choices":[{"index":0,"finish_reason":"stop","logprobs":null,
				"message":{"role":"assistant","content":"hello","refusal":null}}],
			"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":4}}}`},
		{"tool calls", llmtest.Calls(llmtest.Call("a", `{"x":1}`), llmtest.ToolCall{ID: "mine", Name: "b", Arguments: `{bad`}), `{
			"id":"chatcmpl-fake-1","object":"chat.completion","created":1700000000,"model":"m",
			"choices":[{"index":0,"finish_reason":"tool_calls","logprobs":null,
				"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[
					{"id":"call_1_0","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},
					{"id":"mine","type":"function","function":{"name":"b","arguments":"{bad"}}]}}],
			"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":0}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(llmtest.Always(tt.reply))
			defer srv.Close()
			status, _, body := post(t, context.Background(), srv, oaUser)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			jsonEqual(t, body, tt.want)
		})
	}
}

func TestAnthropicReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"text", llmtest.Reply{Text: "hello", Usage: llmtest.Usage{InputTokens: 3, OutputTokens: 2, CachedTokens: 4}}, `{
			"id":"msg_fake_1","type":"message","role":"assistant","model":"m",
			"content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,
			"usage":{"input_tokens":3,"output_tokens":2,"cache_read_input_tokens":4,"cache_creation_input_tokens":0}}`},
		{"tool calls", llmtest.Reply{Text: "on it", ToolCalls: []llmtest.ToolCall{
			llmtest.Call("a", `{"x":1}`), {ID: "mine", Name: "b"}, llmtest.Call("c", `{bad`)}}, `{
			"id":"msg_fake_1","type":"message","role":"assistant","model":"m",
			"content":[{"type":"text","text":"on it"},
				{"type":"tool_use","id":"toolu_1_0","name":"a","input":{"x":1}},
				{"type":"tool_use","id":"mine","name":"b","input":{}},
				{"type":"tool_use","id":"toolu_1_2","name":"c","input":"{bad"}],
			"stop_reason":"tool_use","stop_sequence":null,
			"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropic(llmtest.Always(tt.reply))
			defer srv.Close()
			status, _, body := post(t, context.Background(), srv, anUser)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			jsonEqual(t, body, tt.want)
		})
	}
}

func TestDecodeOpenAI(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	status, _, body := post(t, context.Background(), srv, `{"model":"gpt","max_completion_tokens":50,"messages":[
		{"role":"developer","content":"rules"},
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"out"}],
		"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	got := srv.Requests()[0]
	want := []llmtest.Message{
		{Role: "system", Content: "rules"},
		{Role: "user", Content: "ab"},
		{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "c1", Content: "out"},
	}
	if got.Model != "gpt" || got.MaxTokens != 50 || got.Seq != 1 || !reflect.DeepEqual(got.Messages, want) {
		t.Errorf("got %+v", got)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "f" || got.Tools[0].Description != "d" || string(got.Tools[0].Parameters) != `{"type":"object"}` {
		t.Errorf("tools = %+v", got.Tools)
	}
	if got.Last().Role != "tool" {
		t.Errorf("Last() = %+v", got.Last())
	}
}

func TestDecodeAnthropic(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	status, _, body := post(t, context.Background(), srv, `{"model":"claude","max_tokens":50,
		"system":"rules",
		"messages":[
		{"role":"user","content":"q"},
		{"role":"assistant","content":[{"type":"text","text":"t"},{"type":"tool_use","id":"u1","name":"f","input":{"a":1}},{"type":"tool_use","id":"u2","name":"g","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"u1","content":"r1"},
			{"type":"tool_result","tool_use_id":"u2","is_error":true,"content":[{"type":"text","text":"r2"}]},
			{"type":"text","text":"more"}]}],
		"tools":[{"name":"f","input_schema":{"type":"object","properties":{}}}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	got := srv.Requests()[0]
	want := []llmtest.Message{
		{Role: "system", Content: "rules"},
		{Role: "user", Content: "q"},
		{Role: "assistant", Content: "t", ToolCalls: []llmtest.ToolCall{{ID: "u1", Name: "f", Arguments: `{"a":1}`}, {ID: "u2", Name: "g", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "u1", Content: "r1"},
		{Role: "tool", ToolCallID: "u2", Content: "r2", IsError: true},
		{Role: "user", Content: "more"},
	}
	if got.Model != "claude" || got.MaxTokens != 50 || !reflect.DeepEqual(got.Messages, want) {
		t.Errorf("got %+v", got.Messages)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "f" {
		t.Errorf("tools = %+v", got.Tools)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		anthropic bool
		reply     llmtest.Reply
		status    int
		header    string // "name: value" expected in the response
		body      string // expected JSON body ("" to skip)
	}{
		{"openai 503", false, llmtest.Error(503), 503, "", `{"error":{"message":"llmtest: service unavailable","type":"server_error","param":null,"code":null}}`},
		{"openai 429", false, llmtest.RateLimit("7"), 429, "Retry-After: 7", `{"error":{"message":"llmtest: too many requests","type":"rate_limit_exceeded","param":null,"code":null}}`},
		{"anthropic 529", true, llmtest.Error(529), 529, "", `{"type":"error","error":{"type":"overloaded_error","message":"llmtest: status 529"}}`},
		{"anthropic 429", true, llmtest.RateLimit("Wed, 21 Oct 2015 07:28:00 GMT"), 429, "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", `{"type":"error","error":{"type":"rate_limit_error","message":"llmtest: too many requests"}}`},
		{"custom message", true, llmtest.Reply{Fault: &llmtest.Fault{Status: 400, Message: "prompt is too long"}}, 400, "", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`},
		{"zero status is 500", false, llmtest.Reply{Fault: &llmtest.Fault{}}, 500, "", ""},
		{"raw", false, llmtest.Raw(200, `{"choices":[]}`), 200, "Content-Type: application/json", `{"choices":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv *llmtest.Server
			body := oaUser
			if tt.anthropic {
				srv, body = llmtest.NewAnthropic(llmtest.Always(tt.reply)), anUser
			} else {
				srv = llmtest.NewOpenAI(llmtest.Always(tt.reply))
			}
			defer srv.Close()
			status, h, got := post(t, context.Background(), srv, body)
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			if tt.header != "" {
				k, v, _ := strings.Cut(tt.header, ": ")
				if h.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, h.Get(k), v)
				}
			}
			if tt.body != "" {
				jsonEqual(t, got, tt.body)
			}
		})
	}
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Malformed()))
	defer srv.Close()
	status, _, got := post(t, context.Background(), srv, oaUser)
	if status != 200 || json.Valid([]byte(got)) {
		t.Errorf("Malformed: status %d body %q, want 200 and invalid JSON", status, got)
	}
}

func TestScripts(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Sequence(llmtest.Error(500), llmtest.Text("second")),
		"b": llmtest.Always(llmtest.Text("b")),
		"c": llmtest.Sequence(),
	}))
	defer srv.Close()
	ask := func(model string) (int, string) {
		status, _, body := post(t, context.Background(), srv, `{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`)
		return status, body
	}
	if s, _ := ask("a"); s != 500 {
		t.Errorf("a #1: %d, want 500", s)
	}
	for i := range 2 { // the last reply repeats
		if s, b := ask("a"); s != 200 || !strings.Contains(b, "second") {
			t.Errorf("a #%d: %d %s", i+2, s, b)
		}
	}
	if s, _ := ask("b"); s != 200 {
		t.Errorf("b: %d", s)
	}
	if s, _ := ask("c"); s != 500 {
		t.Errorf("empty Sequence: %d, want 500", s)
	}
	if s, b := ask("zzz"); s != 404 || !strings.Contains(b, `model \"zzz\" not found`) {
		t.Errorf("unknown model: %d %s", s, b)
	}
	if got, want := srv.Models(), []string{"a", "a", "a", "b", "c", "zzz"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Models = %v, want %v", got, want)
	}
	if srv.Count("a") != 3 || srv.Count("b") != 1 || srv.Count("") != 6 || srv.Count("nope") != 0 {
		t.Errorf("Count a=%d b=%d all=%d", srv.Count("a"), srv.Count("b"), srv.Count(""))
	}
	for i, r := range srv.Requests() {
		if r.Seq != i+1 {
			t.Errorf("request %d has Seq %d", i, r.Seq)
		}
	}
}

func TestEndpoints(t *testing.T) {
	srv := llmtest.NewOpenAI(nil)
	defer srv.Close()
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/audio/speech", oaUser, 404},
		{"GET", "/v1/chat/completions", "", 405},
		{"POST", "/v1/chat/completions", "{not json", 400},
		{"POST", "/chat/completions", oaUser, 500}, // nil script: an empty Sequence
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
	}
	if srv.Count("") != 1 {
		t.Errorf("Count = %d, want 1 (only decoded requests are logged)", srv.Count(""))
	}
}

func TestHangEndsWithClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	arrived := make(chan struct{})
	srv2 := llmtest.NewAnthropic(func(llmtest.Request) llmtest.Reply { close(arrived); return llmtest.Hang() })
	defer srv2.Close()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv2.URL+"/v1/messages", strings.NewReader(anUser))
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	<-arrived
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestReleaseAndGate(t *testing.T) {
	gate := make(chan struct{})
	arrived := make(chan struct{}, 2)
	srv := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		arrived <- struct{}{}
		if r.Model == "hang" {
			return llmtest.Hang()
		}
		return llmtest.Reply{Text: "late", Gate: gate}
	})
	send := func(model string) <-chan error {
		errc := make(chan error, 1)
		go func() {
			res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`))
			if err == nil {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if !strings.Contains(string(b), "late") {
					err = errors.New("unexpected body " + string(b))
				}
			}
			errc <- err
		}()
		return errc
	}
	gated, hung := send("gated"), send("hang")
	<-arrived
	<-arrived
	close(gate) // the gated request is answered
	if err := <-gated; err != nil {
		t.Errorf("gated: %v", err)
	}
	srv.Close() // releases the hanging one: its connection is dropped
	if err := <-hung; err == nil {
		t.Error("hang: got an answer, want a dropped connection")
	}
}

func TestConcurrentRequests(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Sequence(llmtest.Text("x")))
	defer srv.Close()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if s, _, b := post(t, context.Background(), srv, anUser); s != 200 {
				t.Errorf("%d %s", s, b)
			}
		})
	}
	wg.Wait()
	if srv.Count("m") != 16 {
		t.Errorf("Count = %d", srv.Count("m"))
	}
}
