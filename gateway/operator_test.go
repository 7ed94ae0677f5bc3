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
// primary held, every backup disabled) answers 503 on every wire, never
// 529 or FallbackExhausted, with Retry-After at the earliest end an
// operator set and the operator's reason and name in the message (§9.2).
func TestOperatorRefusal(t *testing.T) {
	tests := []struct {
		name    string
		primary llmtest.Script
		actions []string
		retry   string   // Retry-After
		want    []string // in the message
	}{
		{"held, backups disabled", llmtest.Always(llmtest.Text("a")), []string{
			`{"action":"hold","ttl":"10m","reason":"INC-42"}`,
			`{"action":"disable","entry":"up/b","ttl":"1h","reason":"flaky"}`,
			`{"action":"disable","entry":"up/c","ttl":"30m","reason":"maintenance"}`,
		}, "600", []string{"held by an operator", "INC-42", "oncall", "up/b disabled by an operator", "flaky", "up/c", "maintenance", "2026-12-03T04:10:00Z"}},
		{"backups disabled, the primary failing", llmtest.Always(llmtest.Error(529)), []string{
			`{"action":"disable","entry":"up/b","ttl":"20m","reason":"flaky"}`,
			`{"action":"disable","entry":"up/c","reason":"maintenance"}`,
		}, "60", []string{"up/b disabled by an operator", "flaky", "up/c disabled by an operator", "upstream answered 529"}},
	}
	for _, tc := range tests {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
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
				if path == "/v1/messages" {
					body = messagesBody("smart", false)
				}
				var a answer
				for range 4 { // the failing primary trips within a few requests
					if a = postTo(t, f.srv, path, body); a.status == http.StatusServiceUnavailable {
						break
					}
				}
				t.Logf("%d Retry-After %s: %s", a.status, a.header.Get("Retry-After"), a.body)
				if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") != tc.retry {
					t.Fatalf("got %d Retry-After %q: %s", a.status, a.header.Get("Retry-After"), a.body)
				}
				for _, w := range tc.want {
					if !strings.Contains(a.body, w) {
						t.Errorf("the answer lacks %q: %s", w, a.body)
					}
				}
				for _, no := range []string{"FallbackExhausted", "fallback:", "retry:", "529 status code", "failed"} {
					if strings.Contains(a.body, no) {
						t.Errorf("the answer says %q: %s", no, a.body)
					}
				}
				if !strings.Contains(logs.String(), `"outcome":"operator"`) {
					t.Errorf("request log: %s", logs.String())
				}
			})
		}
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
