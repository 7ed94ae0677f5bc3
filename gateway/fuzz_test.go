package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// FuzzRequestPath drives the whole request path (method, path, headers,
// body) into the gateway in front of an upstream that serves every request
// it can read: every answer is a well-formed error or a forwarded response
// (with x-loopctl-model, printable), nothing panics, and no breaker ever
// holds a verdict, since the upstream never fails a request the gateway
// sent. Goroutines left over are caught by TestMain's goleak check.
func FuzzRequestPath(f *testing.F) {
	for _, s := range []struct{ method, path, headers, body string }{
		{"POST", "/v1/chat/completions", "Content-Type: application/json", chatBody("smart", false)},
		{"POST", "/v1/chat/completions", "Content-Type: application/json", chatBody("smart", true)},
		{"POST", "/chat/completions", "Content-Type: application/json\nConnection: Accept\nAccept: x", chatBody("up/direct", true)},
		{"POST", "/v1/chat/completions", "Content-Type: application/json", `{"model":"smart","\u0073tream":true,"messages":[{"role":"user","content":"x"}]}`},
		{"POST", "/v1/chat/completions", "Content-Type: application/json", `{"model":"smart","stream":"true","messages":[]}`},
		{"POST", "/v1/chat/completions", "Content-Type: text/plain", chatBody("smart", false)},
		{"POST", "/v1/chat/completions", "Content-Type: application/json", `{"model":"up/a\u0000b"}`},
		{"POST", "/v1/chat/completions", "Content-Type: application/json", `[{"model":"smart"}]`},
		{"GET", "/v1/models", "", ""},
		{"GET", "/metrics", "Authorization: Bearer x", ""},
		{"GET", "/dashboard/state.json", "", ""},
		{"PUT", "/v1/chat/completions", "", "{}"},
	} {
		f.Add(s.method, s.path, s.headers, []byte(s.body))
	}
	up := llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Chunked("o", "k")))
	cfg := chain()
	cfg.Upstreams = []Upstream{{Name: "up", BaseURL: "http://upstream.test/v1"}}
	gw, err := New(cfg, Options{Transport: pipeTransport{up}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { up.Release(); gw.Close() })
	f.Fuzz(func(t *testing.T, method, path, headers string, body []byte) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://127.0.0.1:4000"+path, strings.NewReader(string(body)))
		if err != nil {
			return // not a request a server would parse
		}
		for _, line := range strings.Split(headers, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k != "" {
				req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		ctx, cancel := context.WithTimeout(req.Context(), 3*time.Second)
		defer cancel()
		req = req.WithContext(ctx)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		served := make(chan struct{})
		go func() { defer close(served); gw.ServeHTTP(rec, req) }()
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("%s %s %q %q: no answer after 5s\n%s", method, path, headers, body, buf[:runtime.Stack(buf, true)])
		}
		if d := time.Since(t0); d > 2*time.Second {
			t.Fatalf("%s %s %q %q: answered after %v (%d %.200s)", method, path, headers, body, d, rec.Code, rec.Body.String())
		}
		checkAnswer(t, req, rec)
		for name, m := range managers(gw) {
			if s := m.Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
				t.Fatalf("%s %s %q: a verdict against %s: %+v", method, path, body, name, s)
			}
		}
	})
}

// checkAnswer fails t unless rec is a well-formed answer to req.
func checkAnswer(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 100 || rec.Code > 599 {
		t.Fatalf("status %d", rec.Code)
	}
	p := req.URL.Path
	switch {
	case p == "/healthz" || p == "/readyz" || p == "/metrics" || p == "/dashboard" || strings.HasPrefix(p, "/dashboard/") || p == "/v1/models" || p == "/models":
		if rec.Code != 401 && rec.Code != 403 && rec.Code != 415 {
			return // the operations endpoints' own formats (the gateway's doors answer errors)
		}
	case rec.Header().Get("X-Loopctl-Model") != "" && rec.Code < 500 && rec.Code != 429:
		if m := rec.Header().Get("X-Loopctl-Model"); !validModelName(m) {
			t.Fatalf("x-loopctl-model %q", m)
		}
		return // forwarded
	}
	var e struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("%s %s: %d %q is not an error object", req.Method, p, rec.Code, rec.Body.String())
	}
}
