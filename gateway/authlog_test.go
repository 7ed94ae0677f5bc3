package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// TestAuthFailureLoggedOncePerMinute: an upstream whose credentials
// cannot be had fails each attempt once, with no same-model retry, and is
// logged once per minute with the source tried, not once per request.
func TestAuthFailureLoggedOncePerMinute(t *testing.T) {
	argv, runs, fail := tokenHelper(t)
	fail()
	backup := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("b")))
	t.Cleanup(backup.Close)
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var logs bytes.Buffer
	srv := cloudGateway(t, Config{
		Upstreams: []Upstream{
			{Name: "helper", BaseURL: "http://127.0.0.1:9/v1", Auth: Auth{Type: AuthCommand, Command: argv}},
			{Name: "backup", BaseURL: backup.BaseURL(), APIKey: "sk-backup"},
		},
		Models: []Model{{Name: "m", Primary: "helper/gpt", Chain: []string{"backup/gpt"}, Breaker: Breaker{TripThreshold: 100}}},
	}, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	lines := func() int { return strings.Count(logs.String(), `"msg":"upstream auth failed"`) }
	for i := 1; i <= 3; i++ {
		if a := postTo(t, srv, "/v1/chat/completions", chatBody("m", false)); a.status != 200 || a.header.Get("X-Loopctl-Model") != "backup/gpt" {
			t.Fatalf("request %d: %d %s", i, a.status, a.body)
		}
		if runs() != i {
			t.Fatalf("after %d requests the helper ran %d times: a credential failure is retried", i, runs())
		}
	}
	if lines() != 1 || !strings.Contains(logs.String(), `"source":"the command sh"`) || !strings.Contains(logs.String(), `"upstream":"helper"`) {
		t.Fatalf("3 failures within a minute logged %d times:\n%s", lines(), logs.String())
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	postTo(t, srv, "/v1/chat/completions", chatBody("m", false))
	if lines() != 2 {
		t.Fatalf("a minute later: %d lines", lines())
	}
}
