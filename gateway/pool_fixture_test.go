package gateway

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// hostTransport serves each upstream host with its own handler, in
// process (pipeTransport), so that a pool's members, each its own
// deployment with its own key, run in a synctest bubble.
type hostTransport map[string]http.Handler

func (h hostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return pipeTransport{h[req.URL.Host]}.RoundTrip(req)
}

// poolGW is a gateway in front of several scripted upstreams, one per
// deployment.
type poolGW struct {
	t   *testing.T
	gw  *Gateway
	ups map[string]*llmtest.Handler // by upstream name
}

// deployment is one scripted upstream of a poolGW: its name, its wire
// and its script.
type deployment struct {
	name      string
	anthropic bool
	script    llmtest.Script
}

// newPoolGW builds the gateway of cfg with an upstream per deployment
// (named as it, key sk-<name>, on http://<name>.test) and a seeded random
// source.
func newPoolGW(t *testing.T, cfg Config, opt Options, deps ...deployment) *poolGW {
	t.Helper()
	p := &poolGW{t: t, ups: map[string]*llmtest.Handler{}}
	tr := hostTransport{}
	for _, d := range deps {
		u := Upstream{Name: d.name, BaseURL: "http://" + d.name + ".test/v1", APIKey: "sk-" + d.name}
		h := llmtest.NewOpenAIHandler(d.script)
		if d.anthropic {
			u.API, u.BaseURL = APIAnthropic, "http://"+d.name+".test"
			h = llmtest.NewAnthropicHandler(d.script)
		}
		cfg.Upstreams = append(cfg.Upstreams, u)
		p.ups[d.name], tr[d.name+".test"] = h, h
		t.Cleanup(h.Release)
	}
	opt.Transport = tr
	if opt.Rand == nil {
		var mu sync.Mutex
		r := rand.New(rand.NewPCG(1, 2))
		opt.Rand = func() float64 { mu.Lock(); defer mu.Unlock(); return r.Float64() }
	}
	p.gw = buildPooled(t, cfg, opt)
	return p
}

// count returns how many requests upstream name received.
func (p *poolGW) count(name string) int { return len(p.ups[name].Requests()) }

// do sends body to path with the headers hdr (name, value pairs).
func (p *poolGW) do(ctx context.Context, path, body string, hdr ...string) answer {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	p.gw.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.String()}
}

// chat posts a chat completion for model.
func (p *poolGW) chat(model string, stream bool, hdr ...string) answer {
	return p.do(context.Background(), "/v1/chat/completions", chatBody(model, stream), hdr...)
}

// threePool is pool "p" of a/m, b/m and c/m (weights as given, 0: 1),
// with affinity, and model "claude": primary pool/p, chain d/backup.
func threePool(affinity string, weights ...float64) Config {
	members := []PoolMember{{Target: "a/m"}, {Target: "b/m"}, {Target: "c/m"}}
	for i, w := range weights {
		members[i].Weight = w
	}
	return Config{
		Pools:  []Pool{{Name: "p", Members: members, Affinity: affinity, Breaker: Breaker{TripThreshold: 2}}},
		Models: []Model{{Name: "claude", Primary: "pool/p", Chain: []string{"d/backup"}}},
	}
}

// serving is a deployment that always answers text.
func serving(name string) deployment {
	return deployment{name: name, script: llmtest.Always(llmtest.Text("from " + name))}
}

// down is a deployment that always answers status.
func down(name string, status int) deployment {
	return deployment{name: name, script: llmtest.Always(llmtest.Error(status))}
}
