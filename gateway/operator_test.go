package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// TestOperatorRefusal: a chain an operator took out of rotation (the
// primary held, every backup disabled) answers as GATEWAY.md §4's "chain
// spent" row when nothing was sent (503 fallback_exhausted; Messages 529
// overloaded_error, §6), and as its last failure's row when a request was
// sent (a primary's 529: 429 rate_limit_error; Messages 529
// overloaded_error); Retry-After is the earliest end an operator or the
// breaker set, and the message names the operator's acts and never says
// that anything failed (§9.2).
func TestOperatorRefusal(t *testing.T) {
	held := []string{
		`{"action":"hold","ttl":"10m","reason":"INC-42"}`,
		`{"action":"disable","entry":"up/b","ttl":"1h","reason":"flaky"}`,
		`{"action":"disable","entry":"up/c","ttl":"30m","reason":"maintenance"}`,
	}
	disabled := []string{
		`{"action":"disable","entry":"up/b","ttl":"20m","reason":"flaky"}`,
		`{"action":"disable","entry":"up/c","reason":"maintenance"}`,
	}
	type want struct {
		status     int
		typ, code  string // the error's type and (OpenAI shape) code
		retry      string // Retry-After
		outcome    string // the request log's
		contains   []string
		notContain []string
	}
	spent := []string{"held by an operator", "INC-42", "oncall", "up/b disabled by an operator", "flaky", "up/c", "maintenance", "2026-12-03T04:10:00Z"}
	named := []string{"up/b disabled by an operator", "flaky", "up/c disabled by an operator", "maintenance"}
	tests := []struct {
		name    string
		path    string
		primary llmtest.Script
		actions []string
		posts   int // the last one's answer is checked
		want    want
	}{
		{"held, backups disabled", "/v1/chat/completions", llmtest.Always(llmtest.Text("a")), held, 1,
			want{503, "fallback_exhausted", "fallback_exhausted", "600", outcomeOperator, spent, []string{"upstream"}}},
		{"held, backups disabled", "/v1/messages", llmtest.Always(llmtest.Text("a")), held, 1,
			want{529, "overloaded_error", "", "600", outcomeOperator, spent, []string{"upstream"}}},
		{"backups disabled, the primary answers 529", "/v1/chat/completions", llmtest.Always(llmtest.Error(529)), disabled, 1,
			want{429, "rate_limit_error", "rate_limit_exceeded", "", outcomeRateLimit, append(named, "the last upstream answer: upstream answered 529"), nil}},
		{"backups disabled, the primary answers 529", "/v1/messages", llmtest.Always(llmtest.Error(529)), disabled, 1,
			want{529, "overloaded_error", "", "", outcomeRateLimit, append(named, "the last upstream answer: upstream answered 529"), nil}},
		{"backups disabled, the primary tripped", "/v1/chat/completions", llmtest.Always(llmtest.Error(529)), disabled, 4,
			want{503, "fallback_exhausted", "fallback_exhausted", "60", outcomeOperator, append(named, "breaker is open until"), []string{"upstream"}}},
		{"backups disabled, the primary tripped", "/v1/messages", llmtest.Always(llmtest.Error(529)), disabled, 4,
			want{529, "overloaded_error", "", "60", outcomeOperator, append(named, "breaker is open until"), []string{"upstream"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name+" "+tc.path, func(t *testing.T) {
			clk := &manualClock{t: time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)}
			script := llmtest.ByModel(map[string]llmtest.Script{"a": tc.primary, "b": llmtest.Always(llmtest.Text("b")), "c": llmtest.Always(llmtest.Text("c"))})
			cfg := chain()
			cfg.AdminKeys = []ClientKey{{Name: "oncall", Key: "sk-admin"}}
			var logs bytes.Buffer
			f := newFixture(t, script, cfg, Options{Now: clk.now, Rand: func() float64 { return 0 }, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			for _, a := range tc.actions {
				f.admin("/admin/breakers/smart", a, "sk-admin").view(t)
			}
			body := chatBody("smart", false)
			if tc.path == "/v1/messages" {
				body = messagesBody("smart", false)
			}
			var a answer
			for range tc.posts {
				logs.Reset()
				a = postTo(t, f.srv, tc.path, body)
			}
			t.Logf("%d Retry-After %s: %s", a.status, a.header.Get("Retry-After"), a.body)
			w := tc.want
			typ, _ := a.errorField("type").(string)
			code, _ := a.errorField("code").(string)
			if a.status != w.status || typ != w.typ || code != w.code {
				t.Fatalf("got %d type %q code %q, want %d %q %q: %s", a.status, typ, code, w.status, w.typ, w.code, a.body)
			}
			if w.retry != "" && a.header.Get("Retry-After") != w.retry {
				t.Errorf("Retry-After %q, want %q", a.header.Get("Retry-After"), w.retry)
			}
			if a.header.Get("Retry-After") == "" || a.header.Get("Retry-After-Ms") == "" {
				t.Errorf("no Retry-After or retry-after-ms: %v", a.header)
			}
			for _, s := range w.contains {
				if !strings.Contains(a.body, s) {
					t.Errorf("the answer lacks %q: %s", s, a.body)
				}
			}
			for _, no := range append([]string{"FallbackExhausted", "fallback:", "retry:", "529 status code", "failed", "no model could serve"}, w.notContain...) {
				if strings.Contains(a.body, no) {
					t.Errorf("the answer says %q: %s", no, a.body)
				}
			}
			if !strings.Contains(logs.String(), `"outcome":"`+w.outcome+`"`) {
				t.Errorf("request log lacks outcome %s: %s", w.outcome, logs.String())
			}
		})
	}
}

// TestErrorTextHasNoInternalPrefixes: a request no model could serve is
// answered in the gateway's words, without the retry or fallback
// packages' prefixes.
func TestErrorTextHasNoInternalPrefixes(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Error(500)), chain(), Options{Rand: func() float64 { return 0 }})
	a := f.post(chatBody("smart", false))
	msg, _ := a.errorField("message").(string)
	if a.status != http.StatusBadGateway || !strings.Contains(msg, "upstream answered 500") {
		t.Fatalf("got %d %s", a.status, a.body)
	}
	for _, no := range []string{"retry:", "fallback:", "HTTP 500 Internal Server Error"} {
		if strings.Contains(msg, no) {
			t.Errorf("the message says %q: %s", no, msg)
		}
	}
}
