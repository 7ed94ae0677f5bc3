package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
)

// fixture is a model breaker and a tool registry wired to a Log, as the
// gateway and the MCP proxy wire theirs.
type fixture struct {
	now      time.Time
	settings fallback.Settings
	m        *fallback.Manager
	r        *health.Registry
	log      *dashboard.Log
	h        *dashboard.Handler
}

func newFixture(t *testing.T, clock func() time.Time) *fixture {
	t.Helper()
	f := &fixture{log: dashboard.NewLog(10)}
	f.settings = fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b", "gpt-c"}, TripThreshold: 1,
		RecoveryTimeout: time.Minute, Now: clock, OnTransition: f.log.ModelHook("demo")}
	var err error
	if f.m, err = fallback.New(f.settings); err != nil {
		t.Fatal(err)
	}
	if f.r, err = health.NewRegistry(breaker.Settings{FailureThreshold: 1, Now: clock, OnStateChange: f.log.ToolHook}); err != nil {
		t.Fatal(err)
	}
	src := func() dashboard.Sources {
		return dashboard.Sources{
			Models: []dashboard.Model{{Name: "demo", Manager: f.m, Settings: f.settings}},
			Tools:  []dashboard.ToolSet{{Name: "mcp", Registry: f.r}},
		}
	}
	f.h = dashboard.New(src, dashboard.Options{Log: f.log, PollInterval: 100})
	return f
}

func (f *fixture) trip() {
	turn, _ := f.m.Begin()
	turn.Failure(fallback.Transient)
	p, _ := f.r.Allow("search")
	p.Failure()
}

func TestStateJSON(t *testing.T) {
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	f := newFixture(t, func() time.Time { return now })
	p, _ := f.r.Allow("read")
	p.Success()
	f.trip()
	now = now.Add(20 * time.Second)

	srv := httptest.NewServer(f.h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/state.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var st dashboard.State
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.Models) != 1 {
		t.Fatalf("models = %+v", st.Models)
	}
	m := st.Models[0]
	if m.Name != "demo" || m.State != fallback.Fallback || m.ActiveModel != "gpt-b" || m.CooldownLeft != "40s" ||
		m.TripThreshold != 1 || m.ProbesNeeded != 2 || !m.Activated {
		t.Errorf("model = %+v", m)
	}
	if len(m.Chain) != 2 || !m.Chain[0].Active || m.Chain[0].Budget != 2 || m.Chain[1].Active {
		t.Errorf("chain = %+v", m.Chain)
	}
	if tripped := now.Add(-20 * time.Second); m.OpenUntil == nil || !m.OpenUntil.Equal(tripped.Add(time.Minute)) || m.OpenReason != "recovery_timeout" {
		t.Errorf("open until %v (%q), want %v (recovery_timeout)", m.OpenUntil, m.OpenReason, tripped.Add(time.Minute))
	}
	if m.Trips != 1 || m.Cooldown != "1m0s" {
		t.Errorf("trips %d, cooldown %q; want 1, 1m0s", m.Trips, m.Cooldown)
	}
	if len(st.Tools) != 2 || st.Tools[1].Name != "search" || st.Tools[1].State != breaker.Open ||
		st.Tools[1].Status != health.Unhealthy || st.Tools[1].RetryIn != "10s" || st.Tools[0].State != breaker.Closed {
		t.Errorf("tools = %+v", st.Tools)
	}
	if len(st.Transitions) != 2 || st.Transitions[0].Kind != "tool" || st.Transitions[1].ToModel != "gpt-b" {
		t.Errorf("transitions (newest first) = %+v", st.Transitions)
	}
	// Polling is a pure read: the open tool still grants its probe once due.
	now = now.Add(time.Minute)
	for range 3 {
		r, _ := http.Get(srv.URL + "/state.json")
		r.Body.Close()
	}
	if probe, err := f.r.Allow("search"); err != nil || !probe.IsProbe() {
		t.Fatalf("after polls: Allow(search) = probe %v, %v; want the probe", probe.IsProbe(), err)
	}
	if turn, err := f.m.Begin(); err != nil || !turn.IsProbe() {
		t.Fatalf("after polls: Begin = probe %v, %v; want the probe", turn.IsProbe(), err)
	}
}

func TestHandlerRoutes(t *testing.T) {
	f := newFixture(t, nil)
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", f.h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tests := []struct {
		method, path string
		code         int
		ctype, body  string
	}{
		{"GET", "/dashboard/", 200, "text/html; charset=utf-8", `<script src="app.js">`},
		{"GET", "/dashboard/app.js", 200, "text/javascript; charset=utf-8", "state.json"},
		{"GET", "/dashboard/app.css", 200, "text/css; charset=utf-8", ".state"},
		{"GET", "/dashboard/state.json", 200, "application/json", `"models":[{"name":"demo"`},
		{"GET", "/dashboard/nope", 404, "text/plain; charset=utf-8", "not found"},
		{"POST", "/dashboard/state.json", 405, "text/plain; charset=utf-8", "method not allowed"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		body := string(raw)
		if res.StatusCode != tt.code || res.Header.Get("Content-Type") != tt.ctype || !strings.Contains(body, tt.body) {
			t.Errorf("%s %s = %d %q %.80q; want %d %q containing %q", tt.method, tt.path, res.StatusCode,
				res.Header.Get("Content-Type"), body, tt.code, tt.ctype, tt.body)
		}
	}
}

func TestLogKeepsTheLast(t *testing.T) {
	l := dashboard.NewLog(2)
	for _, name := range []string{"a", "b", "c"} {
		l.ToolHook(name, breaker.Closed, breaker.Open)
	}
	got := l.Recent()
	if len(got) != 2 || got[0].Breaker != "c" || got[1].Breaker != "b" {
		t.Fatalf("Recent = %+v, want c, b", got)
	}
}
