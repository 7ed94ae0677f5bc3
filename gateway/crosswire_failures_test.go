package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// crossFailModels add to crossModels the chains of the failure rows.
func crossFailModels(f *crossFix) {
	t := f.t
	cfg := Config{Retry: Retry{MaxRetries: -1}, Upstreams: []Upstream{
		{Name: "up", BaseURL: f.oa.BaseURL()},
		{Name: "an", API: APIAnthropic, BaseURL: f.an.BaseURL()},
	}, Models: []Model{
		{Name: "cc", Primary: "an/down529", Chain: []string{"up/tools"}},
		{Name: "claude-only", Primary: "an/tools"},
		{Name: "overflow", Primary: "an/down529", Chain: []string{"up/overflow"}},
		{Name: "early", Primary: "up/cut1", Chain: []string{"up/tools"}},
		{Name: "late", Primary: "up/cut2", Chain: []string{"up/tools"}},
		{Name: "safe", Primary: "an/refuse", Chain: []string{"up/tools"}, OnRefusal: "fallback"},
		{Name: "unsafe", Primary: "an/refuse", Chain: []string{"up/tools"}},
		{Name: "oa", Primary: "up/down500", Chain: []string{"an/tools"}},
		{Name: "walk", Primary: "an/down529", Chain: []string{"up/down500", "up/tools"}},
		{Name: "oa-overflow", Primary: "up/down500", Chain: []string{"an/overflow-an"}},
		{Name: "oa-overloaded", Primary: "up/down500", Chain: []string{"an/down529"}},
		{Name: "cc-limited", Primary: "an/down529", Chain: []string{"up/down429"}},
	}}
	gw, err := New(cfg, Options{Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	f.gw.Close()
	f.srv.Config.Handler = gw
	f.gw = gw
}

// The failure rows of §8.3, §8.6 and §8.7, as the client sees them.
func TestCrossFailures(t *testing.T) {
	refusal := `{"id":"msg_r","type":"message","role":"assistant","model":"refuse","content":[],"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}`
	f := newCross(t, map[string]llmtest.Script{
		"overflow":    llmtest.Always(llmtest.Raw(400, `{"error":{"message":"This model's maximum context length is 128000 tokens","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)),
		"cut1":        llmtest.Always(llmtest.Streamed(llmtest.StreamCut, 1, "first ", "never")),
		"cut2":        llmtest.Always(llmtest.Streamed(llmtest.StreamCut, 2, "first ", "never")),
		"refuse":      llmtest.Always(llmtest.Raw(200, refusal)),
		"overflow-an": llmtest.Always(llmtest.Raw(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)),
		"down429":     llmtest.Always(llmtest.Error(429)),
	})
	crossFailModels(f)
	msg := func(model string, stream bool, extra string) string {
		return `{"model":"` + model + `","max_tokens":64,"stream":` + boolText(stream) + extra + `,"messages":[{"role":"user","content":"hi"}]}`
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             []string // substrings of the body, in order
		absent           string
		header           [2]string // a header present, holding [1]
	}{
		{name: "an entry that cannot express n is skipped; the client gets §4's answer", path: "/v1/chat/completions",
			body: `{"model":"oa","n":2,"messages":[{"role":"user","content":"hi"}]}`, status: 502, want: []string{"upstream_error"},
			header: [2]string{"X-Loopctl-Skipped", "an/tools=n"}},
		{name: "no entry could ever serve it: 400 naming the parameter", path: "/v1/chat/completions",
			body: `{"model":"claude-only","n":2,"messages":[{"role":"user","content":"hi"}]}`, status: 400, want: []string{`"param":"n"`}},
		{name: "a request that does not decode for translation, on a model with no entry on its wire: 400", path: "/v1/chat/completions",
			body: `{"model":"claude-only","messages":"hi"}`, status: 400, want: []string{"invalid_request_error", "messages"}},
		{name: "a parameter that changes nothing is dropped and named", path: "/v1/messages",
			body: msg("cc", false, `,"top_k":5`), status: 200, want: []string{"sunny in Paris"}, header: [2]string{"X-Loopctl-Dropped", "top_k"}},
		{name: "a backup's context overflow reaches Claude Code as prompt is too long", path: "/v1/messages",
			body: msg("overflow", false, ""), status: 400, want: []string{`"invalid_request_error"`, "prompt is too long"}},
		{name: "a Claude backup's prompt is too long reaches an OpenAI client as context_length_exceeded", path: "/v1/chat/completions",
			body: `{"model":"oa-overflow","messages":[{"role":"user","content":"hi"}]}`, status: 400,
			want: []string{`"error":{`, `"type":"invalid_request_error"`, `"code":"context_length_exceeded"`}},
		{name: "and a Responses client the same", path: "/v1/responses",
			body: `{"model":"oa-overflow","input":"hi"}`, status: 400, want: []string{`"error":{`, `"code":"context_length_exceeded"`}},
		{name: "a Claude backup's 529 reaches an OpenAI client as 429 rate_limit_error", path: "/v1/chat/completions",
			body: `{"model":"oa-overloaded","messages":[{"role":"user","content":"hi"}]}`, status: 429,
			want: []string{`"error":{`, `"type":"rate_limit_error"`}, header: [2]string{"Retry-After", ""}},
		{name: "an OpenAI backup's 429 reaches Claude Code as 429 rate_limit_error in Anthropic's shape", path: "/v1/messages",
			body: msg("cc-limited", false, ""), status: 429,
			want: []string{`"type":"error"`, `"error":{"type":"rate_limit_error"`}, header: [2]string{"Retry-After-Ms", ""}},
		{name: "a translated stream cut before content fails over invisibly", path: "/v1/messages",
			body: msg("early", true, ""), status: 200, want: []string{"message_start", "sunny ", "message_stop"}, absent: "event: error",
			header: [2]string{"X-Loopctl-Model", "up/tools"}},
		{name: "a translated stream cut after content ends with the client's error event", path: "/v1/messages",
			body: msg("late", true, ""), status: 200, want: []string{"first ", "event: error", "api_error"}, absent: "message_stop"},
		{name: "a chat client's stream cut after content: its error chunk and no [DONE]", path: "/v1/chat/completions",
			body: `{"model":"late","stream":true,"messages":[{"role":"user","content":"hi"}]}`, status: 200, want: []string{"first ", `"error"`}, absent: "[DONE]"},
		{name: "on_refusal: fallback serves the next entry", path: "/v1/messages",
			body: msg("safe", false, ""), status: 200, want: []string{"sunny in Paris"}, header: [2]string{"X-Loopctl-Refused", "an/refuse"}},
		{name: "on_refusal: pass serves the refusal", path: "/v1/chat/completions",
			body: `{"model":"unsafe","messages":[{"role":"user","content":"hi"}]}`, status: 200, want: []string{`"finish_reason":"content_filter"`}},
		{name: "past an overloaded primary, a failing first backup, to the second", path: "/v1/messages",
			body: msg("walk", false, ""), status: 200, want: []string{"sunny in Paris"}, header: [2]string{"X-Loopctl-Model", "up/tools"}},
		{name: "a response minted by translation cannot be continued", path: "/v1/responses",
			body: `{"model":"oa","input":"more","previous_response_id":"resp_lx0123"}`, status: 400, want: []string{"previous_response_not_found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := f.do(tc.path, tc.body)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
			}
			rest := a.body
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("lacks %q (in order) in %s", w, a.body)
				}
				rest = rest[i+len(w):]
			}
			if tc.absent != "" && strings.Contains(a.body, tc.absent) {
				t.Errorf("has %q: %s", tc.absent, a.body)
			}
			if h := tc.header; h[0] != "" && (a.header.Get(h[0]) == "" || !strings.Contains(a.header.Get(h[0]), h[1])) {
				t.Errorf("%s = %q, want %q", h[0], a.header.Get(h[0]), h[1])
			}
		})
	}
}

// count_tokens for a model routed to an openai entry is estimated locally;
// the model list speaks Anthropic's shape to an Anthropic client.
func TestCrossSurface(t *testing.T) {
	f := newCross(t, nil)
	body := `{"model":"oa","messages":[{"role":"user","content":"hello there, how are you today?"}]}`
	a := f.do("/v1/messages/count_tokens", body)
	if a.status != 200 || a.header.Get("X-Loopctl-Estimate") != "true" || !strings.HasPrefix(a.body, `{"input_tokens":`) {
		t.Errorf("count_tokens estimate: %d %v %s", a.status, a.header, a.body)
	}
	if f.oa.Count("") != 0 {
		t.Errorf("an estimate sent %d upstream requests", f.oa.Count(""))
	}
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/v1/models", nil)
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			Type, ID, DisplayName string
		} `json:"data"`
		HasMore bool   `json:"has_more"`
		FirstID string `json:"first_id"`
		LastID  string `json:"last_id"`
	}
	decodeJSON(t, res, &list)
	if len(list.Data) != 4 || list.Data[0].Type != "model" || list.Data[0].ID != "cc" || list.FirstID != "cc" || list.LastID != "embed" || list.HasMore {
		t.Errorf("anthropic model list %+v", list)
	}
}

// decodeJSON decodes res's JSON body into v and closes it.
func decodeJSON(t *testing.T, res *http.Response, v any) {
	t.Helper()
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// A Responses backup that says in its stream, not in a 400, that a
// request overflows its context window (response.failed before any
// content): Claude Code still gets prompt is too long, and the entry no
// verdict (§8.6). A rate limit that speaks of tokens stays a rate limit.
func TestCrossStreamedOverflow(t *testing.T) {
	created := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0," +
		"\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n"
	for _, tc := range []struct {
		name, event string
		status      int
		want        []string
		failures    int
	}{
		{name: "response.failed context_length_exceeded", status: 400, want: []string{`"type":"invalid_request_error"`, "prompt is too long"},
			event: "event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_1\"," +
				"\"status\":\"failed\",\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}}}\n\n"},
		{name: "a rate limit of too many tokens", status: 429, want: []string{`"type":"rate_limit_error"`}, failures: 1,
			event: "event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"rate_limit_exceeded\",\"message\":\"Too many tokens per minute\"}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, created+tc.event)
			}))
			defer up.Close()
			cfg := Config{Retry: Retry{MaxRetries: -1}, Models: []Model{{Name: "cc", Primary: "rs/gpt"}},
				Upstreams: []Upstream{{Name: "rs", BaseURL: up.URL + "/v1", Wires: []string{"responses"}}}}
			gw, err := New(cfg, Options{Rand: func() float64 { return 0 }})
			if err != nil {
				t.Fatal(err)
			}
			fastRateLimits(gw)
			srv := httptest.NewServer(gw)
			defer func() { srv.Close(); gw.Close() }()
			a := postTo(t, srv, "/v1/messages", `{"model":"cc","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			for _, w := range tc.want {
				if a.status != tc.status || !strings.Contains(a.body, w) {
					t.Errorf("%d %s, want %d with %s", a.status, a.body, tc.status, w)
				}
			}
			if s := managers(gw)["cc"].Snapshot(); s.ConsecutiveFailures != tc.failures {
				t.Errorf("ConsecutiveFailures %d, want %d", s.ConsecutiveFailures, tc.failures)
			}
		})
	}
}
