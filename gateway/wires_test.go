package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loopctl/loopctl-go/llmtest"
)

// wfix is a gateway in front of two scripted upstreams sharing one script
// by model: "up" (openai) and "an" (anthropic).
type wfix struct {
	t      *testing.T
	oa, an *llmtest.Server
	gw     *Gateway
	srv    *httptest.Server
}

// wireModels: smart (openai: a, then b), claude (anthropic: a, then b),
// solo (openai a only).
func wireModels() []Model {
	return []Model{
		{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}},
		{Name: "claude", Primary: "an/a", Chain: []string{"an/b"}},
		{Name: "solo", Primary: "up/a"},
	}
}

func newWires(t *testing.T, scripts map[string]llmtest.Script, opt Options) *wfix {
	t.Helper()
	return newWiresWith(t, scripts, Config{Models: wireModels(), Retry: Retry{MaxRetries: -1}}, opt)
}

// newWiresWith is newWires with cfg's models, keys and retry settings.
func newWiresWith(t *testing.T, scripts map[string]llmtest.Script, cfg Config, opt Options) *wfix {
	t.Helper()
	s := llmtest.ByModel(scripts)
	f := &wfix{t: t, oa: llmtest.NewOpenAI(s), an: llmtest.NewAnthropic(s)}
	cfg.Upstreams = []Upstream{
		{Name: "up", BaseURL: f.oa.BaseURL(), APIKey: "sk-up"},
		{Name: "an", API: APIAnthropic, BaseURL: f.an.BaseURL(), APIKey: "sk-an"},
	}
	if opt.Rand == nil {
		opt.Rand = func() float64 { return 0 }
	}
	gw, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	fastRateLimits(gw)
	f.gw, f.srv = gw, httptest.NewServer(gw)
	t.Cleanup(func() { f.srv.Close(); gw.Close(); f.oa.Close(); f.an.Close() })
	return f
}

func (f *wfix) do(path, body string, hdr ...string) answer {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func msgBody(model string, stream bool) string {
	return `{"model":"` + model + `","max_tokens":16,"stream":` + boolText(stream) + `,"messages":[{"role":"user","content":"hi"}]}`
}

func rsBody(model string, stream bool, extra string) string {
	return `{"model":"` + model + `","stream":` + boolText(stream) + `,"input":"hi"` + extra + `}`
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// fastRateLimits caps the rate-limit waits of gw's configured routes at
// 1ms (no real sleeps in tests; the hints still reach the answers).
func fastRateLimits(gw *Gateway) {
	for _, rt := range gw.models {
		rt.policy.MaxRateLimitDelay = time.Millisecond
	}
}

// anError decodes an Anthropic error body.
func (a answer) anType() string {
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(a.body), &e)
	if e.Type != "error" {
		return ""
	}
	return e.Error.Type
}

var (
	ok      = llmtest.Always(llmtest.Chunked("from ", "b"))
	cutLate = func(at int) llmtest.Script {
		return llmtest.Always(llmtest.Streamed(llmtest.StreamCut, at, "first ", "never"))
	}
)

// Every row of §4/§6 on the two new wires, streamed and not: failover before
// the first content, the wire's error event after it, the end marker.
func TestWireFailover(t *testing.T) {
	for _, tc := range []struct {
		name, path, model string
		stream            bool
		primary           llmtest.Script
		status            int
		want              []string // substrings of the answer, in order
		absent            string
		served            string
	}{
		{"messages 500", "/v1/messages", "claude", false, llmtest.Always(llmtest.Error(500)), 200, []string{`"text":"from b"`}, "", "an/b"},
		{"messages 529", "/v1/messages", "claude", false, llmtest.Always(llmtest.Error(529)), 200, []string{`"text":"from b"`}, "", "an/b"},
		{"messages stream 500", "/v1/messages", "claude", true, llmtest.Always(llmtest.Error(500)), 200, []string{"event: message_start", `"text":"from "`, "event: message_stop"}, "event: error", "an/b"},
		{"messages overloaded event before content", "/v1/messages", "claude", true, llmtest.Always(llmtest.Streamed(llmtest.StreamOverloaded, 2, "x")), 200, []string{`"text":"from "`, "event: message_stop"}, "overloaded", "an/b"},
		{"messages cut before content", "/v1/messages", "claude", true, cutLate(2), 200, []string{`"text":"from "`, "event: message_stop"}, "event: error", "an/b"},
		{"messages cut after content", "/v1/messages", "claude", true, cutLate(4), 200, []string{`"text":"first "`, "event: error", `"type":"api_error"`}, "message_stop", "an/a"},
		{"messages no end marker", "/v1/messages", "claude", true, llmtest.Always(llmtest.Streamed(llmtest.StreamNoEnd, 6, "first ")), 200, []string{`"text":"first "`, "event: message_delta", "event: error", `"api_error"`}, "message_stop", "an/a"},
		{"messages upstream error event after content", "/v1/messages", "claude", true, llmtest.Always(llmtest.Streamed(llmtest.StreamOverloaded, 4, "first ", "x")), 200, []string{`"text":"first "`, "event: error", `"overloaded_error"`}, "message_stop", "an/a"},
		{"responses 500", "/v1/responses", "smart", false, llmtest.Always(llmtest.Error(500)), 200, []string{`"text":"from b"`}, "", "up/b"},
		{"responses stream 500", "/v1/responses", "smart", true, llmtest.Always(llmtest.Error(500)), 200, []string{"response.created", `"delta":"from "`, "event: response.completed"}, "event: error", "up/b"},
		{"responses cut before content", "/v1/responses", "smart", true, cutLate(3), 200, []string{`"delta":"from "`, "response.completed"}, "event: error", "up/b"},
		{"responses cut after content", "/v1/responses", "smart", true, cutLate(5), 200, []string{`"delta":"first "`, "event: error", `"code":"stream_interrupted"`, "event: response.failed", `"status":"failed"`}, "response.completed", "up/a"},
		{"responses no end marker", "/v1/responses", "smart", true, llmtest.Always(llmtest.Streamed(llmtest.StreamNoEnd, 8, "first ")), 200, []string{`"delta":"first "`, "event: error", "stream_interrupted", "response.failed"}, "response.completed", "up/a"},
		{"responses upstream error event", "/v1/responses", "smart", true, llmtest.Always(llmtest.Streamed(llmtest.StreamError, 5, "first ", "x")), 200, []string{`"delta":"first "`, `"code":"server_error"`, "event: response.failed"}, "response.completed", "up/a"},
		{"chat no [DONE]", "/v1/chat/completions", "smart", true, llmtest.Always(llmtest.Streamed(llmtest.StreamNoEnd, 3, "first ")), 200, []string{`"content":"first "`, `"finish_reason":"stop"`, `"code":"stream_interrupted"`}, "[DONE]", "up/a"},
		{"embeddings 500", "/v1/embeddings", "smart", false, llmtest.Always(llmtest.Error(500)), 200, []string{`"object":"embedding"`}, "", "up/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newWires(t, map[string]llmtest.Script{"a": tc.primary, "b": ok}, Options{})
			body := rsBody(tc.model, tc.stream, "")
			switch tc.path {
			case "/v1/messages":
				body = msgBody(tc.model, tc.stream)
			case "/v1/chat/completions":
				body = chatBody(tc.model, tc.stream)
			}
			a := f.do(tc.path, body)
			if a.status != tc.status || a.header.Get("X-Loopctl-Model") != tc.served {
				t.Fatalf("status %d served %s, want %d %s\n%s", a.status, a.header.Get("X-Loopctl-Model"), tc.status, tc.served, a.body)
			}
			rest := a.body
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("answer lacks %s (in order)\n%s", w, a.body)
				}
				rest = rest[i+len(w):]
			}
			if tc.absent != "" && strings.Contains(a.body, tc.absent) {
				t.Errorf("answer has %s\n%s", tc.absent, a.body)
			}
		})
	}
}

// When nothing serves: each wire's error shape, status and retry headers.
func TestWireErrorShapes(t *testing.T) {
	limited := llmtest.Always(llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}}}})
	for _, tc := range []struct {
		name, path, model string
		script            llmtest.Script
		status            int
		typ               string // Anthropic error type, or OpenAI error type
		retry             string // Retry-After
	}{
		{"messages all 500", "/v1/messages", "claude", llmtest.Always(llmtest.Error(500)), 502, "api_error", ""},
		{"messages all 529", "/v1/messages", "claude", llmtest.Always(llmtest.Error(529)), 529, "overloaded_error", "5"},
		{"messages all overloaded events", "/v1/messages", "claude", llmtest.Always(llmtest.Streamed(llmtest.StreamOverloaded, 0)), 529, "overloaded_error", "5"},
		{"messages all 429", "/v1/messages", "claude", limited, 429, "rate_limit_error", "2"},
		{"responses all 429", "/v1/responses", "smart", limited, 429, "rate_limit_error", "2"},
		{"responses all 529", "/v1/responses", "smart", llmtest.Always(llmtest.Error(529)), 429, "rate_limit_error", "5"},
		{"embeddings all 500", "/v1/embeddings", "smart", llmtest.Always(llmtest.Error(500)), 502, "upstream_error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newWires(t, map[string]llmtest.Script{"a": tc.script, "b": tc.script}, Options{})
			f.gw.cfg.Retry.MaxRetries = -1
			body := rsBody(tc.model, true, "")
			if tc.path == "/v1/messages" {
				body = msgBody(tc.model, true)
			}
			a := f.do(tc.path, body)
			typ := a.anType()
			if tc.path != "/v1/messages" {
				typ, _ = a.errorField("type").(string)
			}
			if a.status != tc.status || typ != tc.typ || a.header.Get("Retry-After") != tc.retry {
				t.Fatalf("%d %s Retry-After %q, want %d %s %q\n%s", a.status, typ, a.header.Get("Retry-After"), tc.status, tc.typ, tc.retry, a.body)
			}
			if tc.retry != "" && a.header.Get("Retry-After-Ms") == "" {
				t.Error("no retry-after-ms")
			}
			// After 5xx the chain is spent now: 503 fallback_exhausted, or
			// on Messages 529 overloaded_error, both with retry headers. A
			// rate limit spends one attempt per model (SEMANTICS §7.1), so
			// the next request is rate-limited again, not exhausted.
			a = f.do(tc.path, body)
			want, wantType := 503, "fallback_exhausted"
			typ, _ = a.errorField("type").(string)
			if tc.path == "/v1/messages" {
				want, wantType, typ = 529, "overloaded_error", a.anType()
			}
			if tc.retry != "" {
				want, wantType = tc.status, tc.typ
			}
			if a.status != want || typ != wantType || a.header.Get("Retry-After") == "" || a.header.Get("Retry-After-Ms") == "" {
				t.Errorf("exhausted: %d %s %v\n%s", a.status, typ, a.header, a.body)
			}
		})
	}
}

// What the gateway sends upstream on the Anthropic wire.
func TestAnthropicHeaders(t *testing.T) {
	f := newWires(t, map[string]llmtest.Script{"a": ok}, Options{})
	f.gw.clients.keys = nil
	a := f.do("/v1/messages?beta=true", msgBody("claude", false), "x-api-key", "sk-client", "anthropic-beta", "tools-2025", "Authorization", "Bearer sk-client")
	if a.status != 200 {
		t.Fatal(a.status, a.body)
	}
	a = f.do("/v1/messages", msgBody("claude", false), "anthropic-version", "2030-01-01")
	if a.status != 200 {
		t.Fatal(a.status, a.body)
	}
	reqs := f.an.Requests()
	h := reqs[0].Header
	if h.Get("X-Api-Key") != "sk-an" || h.Get("Anthropic-Version") != "2023-06-01" || h.Get("Anthropic-Beta") != "tools-2025" || h.Get("Authorization") != "" {
		t.Errorf("upstream headers %v", h)
	}
	if reqs[0].Query != "beta=true" || reqs[0].Model != "a" {
		t.Errorf("query %q model %q", reqs[0].Query, reqs[0].Model)
	}
	if v := reqs[1].Header.Get("Anthropic-Version"); v != "2030-01-01" {
		t.Errorf("the client's anthropic-version: %q", v)
	}
	if n := testutil.ToFloat64(f.gw.m.requests.WithLabelValues("messages", "claude", "an/a", outcomeSuccess)); n != 2 {
		t.Errorf("requests{api=messages} = %v", n)
	}
}

// Every model is served on the three client wires whatever its entries'
// wires (§8.1): an openai model on /v1/messages and an anthropic model on
// the OpenAI wires, translated; embeddings only by an openai entry.
func TestEveryModelOnEveryWire(t *testing.T) {
	f := newWires(t, map[string]llmtest.Script{"a": ok}, Options{})
	a := f.do("/v1/messages", msgBody("smart", false))
	if a.status != 200 || a.header.Get("X-Loopctl-Translated") != "messages->chat" || !strings.Contains(a.body, `"text":"from b"`) {
		t.Errorf("messages on an openai model: %d %s %v", a.status, a.body, a.header)
	}
	for path, body := range map[string]string{
		"/v1/chat/completions": chatBody("claude", false),
		"/v1/responses":        `{"model":"claude","input":"hi"}`,
	} {
		a = f.do(path, body)
		if a.status != 200 || !strings.HasSuffix(a.header.Get("X-Loopctl-Translated"), "->messages") || !strings.Contains(a.body, "from b") {
			t.Errorf("%s on an anthropic model: %d %s", path, a.status, a.body)
		}
	}
	a = f.do("/v1/embeddings", `{"model":"claude","input":"x"}`)
	if a.status != 404 || a.errorField("code") != "model_not_found" || !strings.Contains(a.body, "openai") {
		t.Errorf("embeddings: %d %s", a.status, a.body)
	}
	if n := f.an.Count("") + f.oa.Count(""); n != 3 {
		t.Errorf("%d upstream requests, want 3", n)
	}
}

// count_tokens: the routed model, no failover, no verdict.
func TestCountTokens(t *testing.T) {
	f := newWires(t, map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(500)), "b": ok}, Options{})
	body := `{"model":"claude","messages":[{"role":"user","content":"hello there"}]}`
	for range 5 {
		if a := f.do("/v1/messages/count_tokens", body); a.status != 502 || a.anType() != "api_error" {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	if f.an.Count("b") != 0 || managers(f.gw)["claude"].State().String() != "primary" {
		t.Errorf("failover or verdict: b %d, state %s", f.an.Count("b"), managers(f.gw)["claude"].State())
	}
	f2 := newWires(t, map[string]llmtest.Script{"a": ok}, Options{})
	if a := f2.do("/v1/messages/count_tokens", body); a.status != 200 || !strings.Contains(a.body, `"input_tokens":2`) {
		t.Errorf("%d %s", a.status, a.body)
	}
}

// Client keys as x-api-key on every wire; GET /v1/models/{id}.
func TestClientKeysAndModel(t *testing.T) {
	f := newWires(t, map[string]llmtest.Script{"a": ok}, Options{})
	f.gw.clients.keys, f.gw.clients.names = nil, nil
	f.gw.cfg.ClientKeys = nil
	g2, err := New(Config{
		ClientKeys: []ClientKey{{Name: "k", Key: "sk-client"}},
		Upstreams:  f.gw.cfg.Upstreams, Models: wireModels(),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Config.Handler = g2
	for _, c := range []struct{ path, body, hdr, val string }{
		{"/v1/messages", msgBody("claude", false), "x-api-key", "sk-client"},
		{"/v1/chat/completions", chatBody("smart", false), "x-api-key", "sk-client"},
		{"/v1/responses", rsBody("smart", false, ""), "Authorization", "Bearer sk-client"},
	} {
		if a := f.do(c.path, c.body, c.hdr, c.val); a.status != 200 {
			t.Errorf("%s: %d %s", c.path, a.status, a.body)
		}
		if a := f.do(c.path, c.body, c.hdr, "wrong"); a.status != 401 {
			t.Errorf("%s wrong key: %d", c.path, a.status)
		}
	}
	if a := f.do("/v1/messages", msgBody("claude", false)); a.status != 401 || a.anType() != "authentication_error" {
		t.Errorf("messages 401 shape: %s", a.body)
	}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
		req.Header.Set("x-api-key", "sk-client")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if s, b := get("/v1/models/claude"); s != 200 || b != `{"id":"claude","object":"model","created":0,"owned_by":"loopctl"}` {
		t.Errorf("%d %s", s, b)
	}
	if s, b := get("/v1/models/nope"); s != 404 || !strings.Contains(b, "model_not_found") {
		t.Errorf("%d %s", s, b)
	}
}
