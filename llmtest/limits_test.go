package llmtest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// manual is a settable clock.
type manual struct {
	mu sync.Mutex
	t  time.Time
}

func (m *manual) Now() time.Time  { m.mu.Lock(); defer m.mu.Unlock(); return m.t }
func (m *manual) Set(t time.Time) { m.mu.Lock(); defer m.mu.Unlock(); m.t = t }

// postTo posts body to srv's URL + path and returns the status and headers.
func postTo(t *testing.T, srv *llmtest.Server, path, body string) (int, http.Header) {
	t.Helper()
	res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header
}

// TestLimitsOpenAI: each answer announces what is left; the request over the
// limit gets 429 with the same headers and Retry-After; the next window
// starts fresh.
func TestLimitsOpenAI(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clk := &manual{t: t0}
	lim := &llmtest.Limits{Requests: 3, InputTokens: 100, Window: time.Second, Now: clk.Now}
	srv := llmtest.NewOpenAI(lim.Script(llmtest.Always(llmtest.Reply{Text: "ok", Usage: llmtest.Usage{InputTokens: 20, CachedTokens: 10}})))
	defer srv.Close()
	body := `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`
	rows := []struct {
		at                      time.Duration
		status                  int
		remaining, reset, token string
	}{
		{0, 200, "2", "1s", "70"},
		{250 * time.Millisecond, 200, "1", "750ms", "40"},
		{500 * time.Millisecond, 200, "0", "500ms", "10"},
		{600 * time.Millisecond, 429, "0", "400ms", "10"},
		{time.Second, 200, "2", "1s", "70"}, // a new window
	}
	for _, row := range rows {
		clk.Set(t0.Add(row.at))
		for _, path := range []string{"/v1/chat/completions"} {
			status, h := postTo(t, srv, path, body)
			got := []string{h.Get("x-ratelimit-remaining-requests"), h.Get("x-ratelimit-reset-requests"), h.Get("x-ratelimit-remaining-tokens")}
			if status != row.status || got[0] != row.remaining || got[1] != row.reset || got[2] != row.token {
				t.Fatalf("at %v: %d %v, want %d [%s %s %s]", row.at, status, got, row.status, row.remaining, row.reset, row.token)
			}
			if h.Get("x-ratelimit-limit-requests") != "3" || h.Get("x-ratelimit-reset-tokens") != row.reset {
				t.Fatalf("at %v: limit %q, token reset %q", row.at, h.Get("x-ratelimit-limit-requests"), h.Get("x-ratelimit-reset-tokens"))
			}
			if status == 429 && h.Get("Retry-After") != "1" {
				t.Fatalf("Retry-After = %q, want 1", h.Get("Retry-After"))
			}
		}
	}
}

// TestLimitsMessages: on the Messages wire the headers are Anthropic's, the
// reset an RFC 3339 time rounded up to the second, and cached input does not
// count against the input-token limit.
func TestLimitsMessages(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 500_000_000, time.UTC)
	clk := &manual{t: t0}
	lim := &llmtest.Limits{Requests: 2, InputTokens: 50, OutputTokens: 30, Window: 3 * time.Second, Now: clk.Now}
	srv := llmtest.NewAnthropic(lim.Script(llmtest.Always(llmtest.Reply{Text: "ok", Usage: llmtest.Usage{InputTokens: 20, CachedTokens: 1000, OutputTokens: 15}})))
	defer srv.Close()
	body := `{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`
	want := []struct {
		status                  int
		requests, input, output string
	}{{200, "1", "30", "15"}, {200, "0", "10", "0"}, {429, "0", "10", "0"}}
	for i, w := range want {
		status, h := postTo(t, srv, "/v1/messages", body)
		got := []string{h.Get("anthropic-ratelimit-requests-remaining"), h.Get("anthropic-ratelimit-input-tokens-remaining"), h.Get("anthropic-ratelimit-output-tokens-remaining")}
		if status != w.status || got[0] != w.requests || got[1] != w.input || got[2] != w.output {
			t.Fatalf("request %d: %d %v, want %+v", i+1, status, got, w)
		}
		if reset := h.Get("anthropic-ratelimit-requests-reset"); reset != "2026-12-06T12:00:04Z" {
			t.Fatalf("reset = %q, want 2026-12-06T12:00:04Z", reset)
		}
		if h.Get("x-ratelimit-remaining-requests") != "" {
			t.Fatalf("OpenAI headers on the Messages wire")
		}
	}
}

// TestDelay: a delayed answer waits its Delay before anything is sent, on
// the fake clock of a synctest bubble; a client that gives up first gets
// no response.
func TestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := llmtest.NewOpenAIHandler(llmtest.Delayed(2*time.Second, llmtest.Always(llmtest.Text("late"))))
		body := `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`
		start := time.Now()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
		if took := time.Since(start); took != 2*time.Second || rec.Code != 200 || !strings.Contains(rec.Body.String(), "late") {
			t.Fatalf("answer after %v: %d %s", took, rec.Code, rec.Body)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		start = time.Now()
		func() {
			defer func() {
				if r := recover(); r != http.ErrAbortHandler {
					t.Errorf("recovered %v, want the connection dropped", r)
				}
			}()
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
		if took := time.Since(start); took != 500*time.Millisecond {
			t.Fatalf("gave up after %v, want the client's 500ms", took)
		}
	})
}

// TestReplyHeaderOnStream: Reply.Header is sent with a streamed answer too.
func TestReplyHeaderOnStream(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Always(llmtest.Reply{Text: "hi", Header: http.Header{"X-Deployment": {"b"}}}))
	defer srv.Close()
	status, h := postTo(t, srv, "/v1/messages", `{"model":"claude","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || h.Get("X-Deployment") != "b" || h.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", status, h)
	}
}

// TestLimitsConcurrent: requests at once never get more than the window's
// requests served.
func TestLimitsConcurrent(t *testing.T) {
	lim := &llmtest.Limits{Requests: 5, Window: time.Hour}
	h := llmtest.NewOpenAIHandler(lim.Script(llmtest.Always(llmtest.Text("ok"))))
	body := `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 20 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
			mu.Lock()
			codes[rec.Code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] != 5 || codes[429] != 15 {
		t.Fatalf("codes %v, want 5 served and 15 refused", codes)
	}
}
