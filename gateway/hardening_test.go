package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// rawUpstream starts h as upstream "raw" of cfg (base URL .../v1).
func rawUpstream(t *testing.T, cfg *Config, h http.HandlerFunc) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg.Upstreams = append(cfg.Upstreams, Upstream{Name: "raw", BaseURL: srv.URL + "/v1"})
}

func noRetries(c Config) Config { c.Retry.MaxRetries = -1; return c }

// Item 1: keys are read as the upstream reads them. A key that is "model" or
// "stream" only once escapes are decoded or case is folded is a 400 that
// never reaches an upstream; the breaker is untouched.
func TestKeysReadAsTheUpstreamReadsThem(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), chain(), Options{})
	for _, body := range []string{
		`{"model":"smart","\u0073tream":true,"messages":[]}`,
		`{"model":"smart","Stream":true,"messages":[]}`,
		`{"model":"smart","STREAM":true,"messages":[]}`,
		`{"model":"smart","ſtream":true,"messages":[]}`, // U+017F folds to s in Go's decoder
		`{"model":"smart","MODEL":"up/a","messages":[]}`,
		`{"m\u006fdel":"smart","messages":[]}`,
		`{"model":"smart","stre\u0061m":false}`,
	} {
		a := f.post(body)
		if a.status != 400 || a.errorField("type") != "invalid_request_error" {
			t.Errorf("%s: %d %s", body, a.status, a.body)
		}
	}
	if n := f.up.Count(""); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
	if a := f.post(`{"model":"smart","streaming":true,"models":[],"messages":[{"role":"user","content":"hi"}]}`); a.status != 200 {
		t.Errorf("near names: %d %s", a.status, a.body)
	}
	if s := managers(f.gw)["smart"].Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
		t.Errorf("breaker %+v", s)
	}
}

// Item 1: an answer whose shape is not what the request asked for (a stream
// to a request without "stream": true) is not the model's failure.
func TestShapeMismatchIsNoVerdict(t *testing.T) {
	cfg := Config{Models: []Model{{Name: "m", Primary: "raw/x"}}}
	rawUpstream(t, &cfg, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n")
	})
	f := newFixture(t, llmtest.ByModel(nil), cfg, Options{})
	for range 5 {
		if a := f.post(chatBody("m", false)); a.status != 502 || a.errorField("code") != "unexpected_stream" {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	if s := managers(f.gw)["m"].Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
		t.Errorf("breaker %+v", s)
	}
}

// Items 2 and 13: only the allow-listed headers cross the gateway, either way.
func TestHeaderAllowLists(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	cfg := Config{Models: []Model{{Name: "m", Primary: "raw/x"}}}
	rawUpstream(t, &cfg, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Set-Cookie", "session=upstream")
		h.Set("Server", "upstream/1.0")
		h.Set("OpenAI-Organization", "org-secret")
		h.Set("OpenAI-Project", "proj-secret")
		h.Set("X-Request-Id", "req-1")
		h.Set("X-Ratelimit-Remaining-Requests", "99")
		h.Set("Openai-Processing-Ms", "12")
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	})
	f := newFixture(t, llmtest.ByModel(nil), cfg, Options{})
	a := f.post(chatBody("m", false),
		"OpenAI-Organization", "org-tenant", "OpenAI-Project", "proj-tenant",
		"X-Forwarded-For", "1.2.3.4", "X-Forwarded-Host", "evil", "Cookie", "c=1",
		"Connection", "X-Stainless-Lang", "X-Stainless-Lang", "go", "X-Stainless-Os", "Linux",
		"Anthropic-Beta", "tools-1", "Openai-Beta", "assistants=v2", "Idempotency-Key", "k1",
		"Accept", "application/json", "X-Custom", "1")
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"Openai-Organization", "Openai-Project", "X-Forwarded-For", "X-Forwarded-Host", "Cookie", "X-Stainless-Lang", "X-Custom"} {
		if v := got.Get(k); v != "" {
			t.Errorf("upstream got %s: %q", k, v)
		}
	}
	for k, v := range map[string]string{"X-Stainless-Os": "Linux", "Anthropic-Beta": "tools-1", "Openai-Beta": "assistants=v2", "Idempotency-Key": "k1", "Accept": "application/json"} {
		if !strings.HasPrefix(got.Get(k), v) || got.Get(k) == "" {
			t.Errorf("upstream %s = %q, want %q", k, got.Get(k), v)
		}
	}
	for _, k := range []string{"Set-Cookie", "Server", "Openai-Organization", "Openai-Project"} {
		if v := a.header.Get(k); v != "" {
			t.Errorf("client got %s: %q", k, v)
		}
	}
	for _, k := range []string{"X-Request-Id", "X-Ratelimit-Remaining-Requests", "Openai-Processing-Ms", "X-Loopctl-Model"} {
		if a.header.Get(k) == "" {
			t.Errorf("client lacks %s", k)
		}
	}
}

// Item 3: the upstream's error text never reaches the client or the log;
// its status and error type and code do.
func TestUpstreamErrorTextStaysUpstream(t *testing.T) {
	var logs bytes.Buffer
	leak := `{"error":{"message":"invalid key Bearer sk-live-SECRET","type":"server_error","code":"boom"}}`
	f := newFixture(t, llmtest.Always(llmtest.Raw(500, leak)), noRetries(Config{Models: []Model{{Name: "m", Primary: "up/a"}}}),
		Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	a := f.post(chatBody("m", false))
	if a.status != 502 || strings.Contains(a.body, "SECRET") || !strings.Contains(a.body, "500") ||
		!strings.Contains(a.body, "type server_error") || !strings.Contains(a.body, "code boom") {
		t.Errorf("%d %s", a.status, a.body)
	}
	if strings.Contains(logs.String(), "SECRET") {
		t.Errorf("log: %s", logs.String())
	}
	err := redactURLError(&url.Error{Op: "Post", URL: "http://u:pw@h/v1/chat/completions?key=SECRET", Err: io.EOF})
	if s := err.Error(); strings.Contains(s, "SECRET") || strings.Contains(s, "pw") || !strings.Contains(s, "http://h/v1/chat/completions") {
		t.Errorf("redacted: %s", s)
	}
}

// Item 4: any number of direct names leaves a bounded number of breakers and
// series; names too long or not printable are refused at once.
func TestDirectNamesBounded(t *testing.T) {
	// The upstream is served in process (no sockets): 10,000 requests.
	f := newFixture(t, llmtest.ByModel(nil), Config{Models: []Model{{Name: "m", Primary: "up/a"}}},
		Options{Transport: pipeTransport{llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Text("ok")))}})
	const names = 10_000
	for i := range names {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(chatBody(fmt.Sprintf("up/r%d", i), false)))
		req.Header.Set("Content-Type", "application/json")
		f.gw.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("name %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	m := scrape(f.gw)
	states := strings.Count(m, "\nloopctl_breaker_state{")
	if want := (1 + DefaultMaxDirect) * 3; states > want {
		t.Errorf("loopctl_breaker_state has %d series after %d names, want at most %d", states, names, want)
	}
	if n := len(managers(f.gw)); n > 1+DefaultMaxDirect {
		t.Errorf("%d breakers", n)
	}
	series := 0
	for _, line := range strings.Split(m, "\n") {
		if strings.Contains(line, `up/r`) {
			series++
		}
	}
	if series > 25*(1+DefaultMaxDirect) { // a histogram is 16 lines

		t.Errorf("%d series name a direct model", series)
	}
	t.Logf("after %d names: %d breaker_state series, %d series naming a direct model, %d bytes of /metrics", names, states, series, len(m))
	for _, name := range []string{"up/" + strings.Repeat("x", 1<<20), "up/" + strings.Repeat("y", MaxModelName), "up/a\x00b", "up/a\x7f", "up/\u200b"} {
		a := f.post(chatBody(name, false))
		if a.status != 400 || a.header.Get("X-Loopctl-Model") != "" || len(a.body) > 1024 {
			t.Errorf("%.20q: %d %.200s", name, a.status, a.body)
		}
	}
}

// Item 4: when every slot holds an open breaker a new name is a 429 with
// Retry-After; max_direct: 0 turns direct names off.
func TestDirectSlotsOpenAndOff(t *testing.T) {
	cfg := noRetries(Config{Models: []Model{{Name: "m", Primary: "up/ok"}}, Limits: Limits{MaxDirect: 2}})
	f := newFixture(t, llmtest.ByModel(map[string]llmtest.Script{"ok": llmtest.Always(llmtest.Text("ok"))}), cfg, Options{})
	for _, n := range []string{"up/bad1", "up/bad2"} {
		if a := f.post(chatBody(n, false)); a.status != 502 {
			t.Fatalf("%s: %d %s", n, a.status, a.body)
		}
	}
	a := f.post(chatBody("up/ok", false))
	if a.status != 429 || a.header.Get("Retry-After") == "" || a.errorField("code") != "direct_models_busy" {
		t.Errorf("all slots open: %d %v %s", a.status, a.header, a.body)
	}
	// A direct name whose breaker is open has no chain: refused at once.
	if a := f.post(chatBody("up/bad1", false)); a.status != 503 || a.header.Get("Retry-After") == "" || a.errorField("type") != "fallback_exhausted" {
		t.Errorf("direct, open: %d %v %s", a.status, a.header, a.body)
	}
	off := newFixture(t, llmtest.Always(llmtest.Text("ok")), Config{Models: []Model{{Name: "m", Primary: "up/a"}}, Limits: Limits{MaxDirect: NoDirect}}, Options{})
	if a := off.post(chatBody("up/x", false)); a.status != 404 {
		t.Errorf("max_direct off: %d %s", a.status, a.body)
	}
	if a := off.post(chatBody("m", false)); a.status != 200 {
		t.Errorf("configured model: %d %s", a.status, a.body)
	}
}
