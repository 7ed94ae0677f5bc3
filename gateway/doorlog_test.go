package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// TestRefusedAtTheDoorIsLogged: a POST without a JSON body type (415),
// refused before any endpoint runs, is one "request" line with its status
// and error and counted with outcome invalid, as a 400 is.
func TestRefusedAtTheDoorIsLogged(t *testing.T) {
	var logs bytes.Buffer
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), chain(), Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	resp, err := f.srv.Client().Post(f.srv.URL+"/v1/chat/completions", "text/plain", strings.NewReader(chatBody("smart", false)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, want := range []string{`"msg":"request"`, `"api":"chat"`, `"status":415`, `"outcome":"invalid"`, `Content-Type: application/json`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logs.String())
		}
	}
	if m := scrape(f.gw); !strings.Contains(m, `loopctl_gateway_requests_total{api="chat",model="",outcome="invalid",upstream_model=""} 1`) {
		t.Errorf("/metrics:\n%s", grepLines(m, "requests_total"))
	}
}

// TestCountTokensLabel: /metrics and the log name count_tokens as its own
// endpoint, not as messages.
func TestCountTokensLabel(t *testing.T) {
	cfg := chain()
	cfg.Models = append(cfg.Models, Model{Name: "claude", Primary: "up/a"})
	var logs bytes.Buffer
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), cfg, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if a := postTo(t, f.srv, "/v1/messages/count_tokens", `{"model":"claude","messages":[{"role":"user","content":"hello there"}]}`); a.status != 200 {
		t.Fatalf("count_tokens: %d %s", a.status, a.body)
	}
	m := scrape(f.gw)
	if !strings.Contains(m, `loopctl_gateway_requests_total{api="count_tokens",model="claude"`) || strings.Contains(m, `{api="messages",model="claude"`) {
		t.Errorf("/metrics:\n%s", grepLines(m, "requests_total"))
	}
	if !strings.Contains(logs.String(), `"api":"count_tokens"`) {
		t.Errorf("log:\n%s", logs.String())
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
