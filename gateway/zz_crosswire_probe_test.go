package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

func TestZZCrossProbe(t *testing.T) {
	script := func(r llmtest.Request) llmtest.Reply {
		switch {
		case strings.HasPrefix(r.Model, "e500"):
			return llmtest.Error(500)
		case strings.HasPrefix(r.Model, "e529"):
			return llmtest.Error(529)
		}
		return llmtest.Text("ok")
	}
	up, an := llmtest.NewOpenAI(script), llmtest.NewAnthropic(script)
	defer up.Close()
	defer an.Close()
	cfg := Config{
		Models: []Model{
			{Name: "F", Primary: "an/e529-f", Chain: []string{"an/e500-f", "an/ok-f"}},
			{Name: "G", Primary: "an/e500-g", Chain: []string{"an/e500-g2", "an/ok-g"}},
		},
		Retry: Retry{MaxRetries: -1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		Upstreams: []Upstream{
			{Name: "up", BaseURL: up.BaseURL(), APIKey: "sk-up"},
			{Name: "an", API: APIAnthropic, BaseURL: an.BaseURL(), APIKey: "sk-an"},
		},
	}
	gw, err := New(cfg, Options{Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	for _, m := range []string{"F", "G"} {
		body := `{"model":"` + m + `","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("content-type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		t.Logf("%s: %d attempts=%s model=%s %.200s", m, res.StatusCode, res.Header.Get("X-Loopctl-Attempts"), res.Header.Get("X-Loopctl-Model"), b)
	}
	t.Logf("an: %v", an.Models())
}
