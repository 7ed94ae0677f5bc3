package gateway

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/internal/redistest"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestReloadKeepsTheSharedBreaker (FLEET rev 3 "Reload"): with a real
// Redis, a reload that keeps model a's primary and chain keeps its shared
// breaker (still open, and a replica built from the new config sees it
// open: the same keys); model c, whose chain changed, gets a new shared
// breaker in Primary although the old one is open.
func TestReloadKeepsTheSharedBreaker(t *testing.T) {
	srv := redistest.Start(t)
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{"fail": llmtest.Always(llmtest.Error(503)), "ok": llmtest.Always(llmtest.Text("ok"))}))
	defer up.Close()
	cfg := Config{
		Upstreams: []Upstream{{Name: "up", BaseURL: up.BaseURL()}},
		Models: []Model{
			{Name: "a", Primary: "up/fail", Chain: []string{"up/ok"}, Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: time.Hour}},
			{Name: "c", Primary: "up/fail", Chain: []string{"up/ok"}, Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: time.Hour}},
		},
	}
	gateway := func() *Gateway {
		st, err := fleet.Dial("redis://"+srv.Addr(), fleet.Options{Prefix: "reload"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		g, err := New(cfg, Options{Backend: st.ModelBackend})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		return g
	}
	g := gateway()
	for _, m := range []string{"a", "c"} {
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody(m, false)))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if a := w.Code; a != 200 {
			t.Fatalf("%s: %d", m, a)
		}
		if s := g.models[m].mgr.State(); s != fallback.Fallback {
			t.Fatalf("%s: %v, want tripped", m, s)
		}
	}
	cfg.Models[1].Chain = []string{"up/ok", "up/ok2"}
	cfg.Models[0].Breaker.ProbeTimeout = time.Minute
	next, rep, err := g.Reload(cfg)
	if err != nil || len(rep.Kept) != 1 || len(rep.Started) != 1 {
		t.Fatalf("reload: %v %+v", err, rep)
	}
	if next.models["a"].mgr.State() != fallback.Fallback || next.models["c"].mgr.State() != fallback.Primary {
		t.Fatalf("after the reload a is %v (want fallback), c %v (want primary)", next.models["a"].mgr.State(), next.models["c"].mgr.State())
	}
	replica := gateway() // a process started with the new config
	if replica.models["a"].mgr.State() != fallback.Fallback || replica.models["c"].mgr.State() != fallback.Primary {
		t.Fatalf("a replica on the new config sees a %v, c %v", replica.models["a"].mgr.State(), replica.models["c"].mgr.State())
	}
}
