package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// managers returns the gateway's model breakers by model name (configured,
// and upstream/model for those addressed directly so far).
func managers(g *Gateway) map[string]*fallback.Manager {
	out := map[string]*fallback.Manager{}
	for _, lb := range g.LocalBreakers() {
		out[lb.Name] = lb.Manager
	}
	return out
}

// fixture is a gateway in front of one scripted upstream "up".
type fixture struct {
	t   *testing.T
	up  *llmtest.Server
	gw  *Gateway
	srv *httptest.Server
}

// newFixture starts upstream script as upstream "up" and a gateway with
// the given models (the Upstreams are filled in).
func newFixture(t *testing.T, script llmtest.Script, cfg Config, opt Options) *fixture {
	t.Helper()
	up := llmtest.NewOpenAI(script)
	cfg.Upstreams = append([]Upstream{{Name: "up", BaseURL: up.BaseURL(), APIKey: "sk-upstream"}}, cfg.Upstreams...)
	gw, err := New(cfg, opt)
	if err != nil {
		up.Close()
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(gw)
	f := &fixture{t: t, up: up, gw: gw, srv: srv}
	t.Cleanup(func() {
		srv.Close()
		gw.Close()
		up.Close()
	})
	return f
}

// chain is a config with model "smart": up/a, then up/b, up/c.
func chain() Config {
	return Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b", "up/c"}}}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) errorField(k string) any {
	var e struct {
		Error map[string]any `json:"error"`
	}
	_ = json.Unmarshal([]byte(a.body), &e)
	return e.Error[k]
}

func (f *fixture) post(body string, hdr ...string) answer {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func chatBody(model string, stream bool) string {
	s := ""
	if stream {
		s = `,"stream":true`
	}
	return `{"model":` + string(quote(model)) + `,"messages":[{"role":"user","content":"hi"}]` + s + `}`
}
