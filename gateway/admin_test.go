package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// admin sends an admin request (a POST when body is not "") with key (""
// none) and returns the answer.
func (f *fixture) admin(path, body, key string) answer {
	f.t.Helper()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != "" {
		method, rd = http.MethodPost, strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// view decodes a breaker view, failing the test on any other answer.
func (a answer) view(t *testing.T) BreakerView {
	t.Helper()
	var v BreakerView
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &v) != nil {
		t.Fatalf("want a breaker view, got %d %s", a.status, a.body)
	}
	return v
}

// TestAdminBadBody: every wrong body of POST /admin/breakers/{model} is a
// 400 naming the field (§9.2), and changes nothing.
func TestAdminBadBody(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), chain(), Options{})
	for _, tc := range []struct {
		body, param string
	}{
		{`{"action":"freeze"}`, "action"},
		{`{"ttl":"10m"}`, "action"},
		{`{"action":"hold"}`, "ttl"},
		{`{"action":"hold","ttl":"ten minutes"}`, "ttl"},
		{`{"action":"hold","ttl":"-5m"}`, "ttl"},
		{`{"action":"hold","ttl":"25h"}`, "ttl"},
		{`{"action":"hold","ttl":10}`, "ttl"},
		{`{"action":"hold","ttl":"10m","reason":"` + strings.Repeat("x", 201) + `"}`, "reason"},
		{`{"action":"hold","ttl":"10m","until":"tomorrow"}`, "until"},
		{`{"action":"disable","ttl":"1h"}`, "entry"},
		{`{"action":"disable","entry":"up/zzz"}`, "entry"},
		{`{"action":"disable","entry":"up/a"}`, "entry"},
		{`{"action":"enable","entry":"up/b","ttl":"1h"}`, "ttl"},
		{`{"action":"reset","entry":"up/b"}`, "entry"},
		{`{"action":"release","reason":"x"}`, "reason"},
		{`not json`, "body"},
		{`{"action":"reset"} {"action":"reset"}`, "body"},
	} {
		a := f.admin("/admin/breakers/smart", tc.body, "")
		if a.status != http.StatusBadRequest || a.errorField("param") != tc.param {
			t.Errorf("%s: %d param %v (%s); want 400 naming %s", tc.body, a.status, a.errorField("param"), a.body, tc.param)
		}
	}
	if v := f.admin("/admin/breakers/smart", "", "").view(t); v.State != fallback.Primary || v.Hold != nil {
		t.Errorf("a refused body changed the breaker: %+v", v)
	}
	if a := f.admin("/admin/breakers/nosuch", `{"action":"reset"}`, ""); a.status != http.StatusNotFound {
		t.Errorf("unknown model: %d %s", a.status, a.body)
	}
}

// TestAdminShowsTrip: a model tripped by 503s shows why and until when it
// is open, the last failure, counters and thresholds (§9.1), and /metrics
// has loopctl_model_open_until_seconds only while it is open.
func TestAdminShowsTrip(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)}
	script := llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(503)), "b": llmtest.Always(llmtest.Text("b"))})
	cfg := chain()
	cfg.Models[0].Breaker = Breaker{TripThreshold: 2, RecoveryTimeout: 30 * time.Second}
	cfg.Retry.MaxRetries = -1
	f := newFixture(t, script, cfg, Options{Now: clk.now})
	if n := testutil.CollectAndCount(f.gw.Registry(), "loopctl_model_open_until_seconds"); n != 0 {
		t.Fatalf("open_until series while closed: %d", n)
	}
	if a := f.post(chatBody("smart", false)); a.status != 200 || a.header.Get("X-Loopctl-Model") != "up/b" {
		t.Fatalf("request: %d %v", a.status, a.header)
	}
	v := f.admin("/admin/breakers/smart", "", "").view(t)
	trip := clk.now()
	if v.State != fallback.Fallback || v.Routed != "up/b" || v.OpenReason != "recovery_timeout" ||
		v.OpenUntil == nil || !v.OpenUntil.Equal(trip.Add(30*time.Second)) || v.Since == nil || !v.Since.Equal(trip) {
		t.Fatalf("view after the trip: %+v", v)
	}
	if lf := v.LastFailure; lf == nil || lf.Model != "up/a" || lf.Status != 503 || lf.Kind != fallback.Transient {
		t.Errorf("last failure: %+v", lf)
	}
	if v.Thresholds != (ThresholdsView{TripThreshold: 2, RecoveryTimeout: "30s", RecoverySuccesses: 2, MaxFailCount: 2, ProbeTimeout: "5m0s", QuotaCooldown: "10m0s", MaxRecoveryTimeout: "5m0s"}) || !v.Counters.FallbackActivated || v.Shared {
		t.Errorf("thresholds %+v, counters %+v, shared %v", v.Thresholds, v.Counters, v.Shared)
	}
	if len(v.Chain) != 2 || v.Chain[0].Model != "up/b" || v.Chain[0].Disabled {
		t.Errorf("chain: %+v", v.Chain)
	}
	want := "\n" + `loopctl_model_open_until_seconds{model="smart"} ` + strconv.FormatInt(trip.Add(30*time.Second).Unix(), 10) + "\n"
	if err := testutil.CollectAndCompare(f.gw.Registry(), strings.NewReader("# HELP loopctl_model_open_until_seconds "+openUntilHelp+"\n# TYPE loopctl_model_open_until_seconds gauge"+want),
		"loopctl_model_open_until_seconds"); err != nil {
		t.Error(err)
	}
	var list struct{ Breakers []BreakerView }
	if a := f.admin("/admin/breakers", "", ""); a.status != 200 || json.Unmarshal([]byte(a.body), &list) != nil || len(list.Breakers) != 1 {
		t.Fatalf("list: %d %s", a.status, a.body)
	}
}

// TestAdminThresholds: the view's thresholds are the settings in force,
// defaults applied, SEMANTICS §8's rules included while on (§9.1).
func TestAdminThresholds(t *testing.T) {
	base := ThresholdsView{TripThreshold: 3, RecoveryTimeout: "1m0s", RecoverySuccesses: 2, MaxFailCount: 2, ProbeTimeout: "5m0s", QuotaCooldown: "10m0s", MaxRecoveryTimeout: "10m0s"}
	with := func(f func(*ThresholdsView)) ThresholdsView { v := base; f(&v); return v }
	for _, tc := range []struct {
		name string
		b    Breaker
		want ThresholdsView
	}{
		{"defaults", Breaker{}, base},
		{"failure rate, window defaults", Breaker{FailureRate: 0.25}, with(func(v *ThresholdsView) {
			v.FailureRate, v.RateWindow, v.RateMinCalls = 0.25, "30s", 20
		})},
		{"slow calls", Breaker{SlowCallAfter: time.Second, SlowCallRate: 0.5, RateWindow: time.Minute, RateMinCalls: 5}, with(func(v *ThresholdsView) {
			v.SlowCallAfter, v.SlowCallRate, v.RateWindow, v.RateMinCalls = "1s", 0.5, "1m0s", 5
		})},
		{"a window's span and minimum without a rule: off", Breaker{RateWindow: time.Minute, RateMinCalls: 5}, base},
		{"quota cooldown never below the recovery timeout", Breaker{RecoveryTimeout: time.Hour}, with(func(v *ThresholdsView) {
			v.RecoveryTimeout, v.QuotaCooldown, v.MaxRecoveryTimeout = "1h0m0s", "1h0m0s", "10h0m0s"
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := thresholds(fallback.Settings{Primary: "up/a", TripThreshold: tc.b.TripThreshold, RecoveryTimeout: tc.b.RecoveryTimeout,
				FailureRate: tc.b.FailureRate, RateWindow: tc.b.RateWindow, RateMinCalls: tc.b.RateMinCalls,
				SlowCallAfter: tc.b.SlowCallAfter, SlowCallRate: tc.b.SlowCallRate}); got != tc.want {
				t.Errorf("thresholds %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAdminActions: hold, release, disable, enable and reset each answer
// with the new state, route as they say, and log one line (§9.2).
func TestAdminActions(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)}
	var hitA atomic.Int32
	script := llmtest.ByModel(map[string]llmtest.Script{
		"a": func(llmtest.Request) llmtest.Reply { hitA.Add(1); return llmtest.Text("a") },
		"b": llmtest.Always(llmtest.Text("b")), "c": llmtest.Always(llmtest.Text("c")),
	})
	var logs bytes.Buffer
	cfg := chain()
	cfg.AdminKeys = []ClientKey{{Name: "oncall", Key: "sk-admin"}}
	cfg.ClientKeys = []ClientKey{{Name: "team", Key: "sk-client"}}
	f := newFixture(t, script, cfg, Options{Now: clk.now, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	routed := func() string {
		t.Helper()
		a := f.post(chatBody("smart", false), "Authorization", "Bearer sk-client")
		if a.status != 200 {
			t.Fatalf("request: %d %s", a.status, a.body)
		}
		return a.header.Get("X-Loopctl-Model")
	}
	if a := f.admin("/admin/breakers/smart", `{"action":"hold","ttl":"10m"}`, ""); a.status != http.StatusUnauthorized {
		t.Fatalf("hold without a key: %d", a.status)
	}
	if a := f.admin("/admin/breakers/smart", `{"action":"hold","ttl":"10m"}`, "sk-client"); a.status != http.StatusUnauthorized {
		t.Fatalf("hold with a client key: %d", a.status)
	}
	v := f.admin("/admin/breakers/smart", `{"action":"hold","ttl":"10m","reason":"INC-42"}`, "sk-admin").view(t)
	end := clk.now().Add(10 * time.Minute)
	if v.State != fallback.Fallback || v.OpenReason != "manual" || !v.OpenUntil.Equal(end) ||
		v.Hold == nil || v.Hold.By != "oncall" || v.Hold.Reason != "INC-42" || !v.Hold.Until.Equal(end) {
		t.Fatalf("after hold: %+v hold %+v", v, v.Hold)
	}
	if m := routed(); m != "up/b" || hitA.Load() != 0 {
		t.Fatalf("held: routed to %s, %d requests reached up/a", m, hitA.Load())
	}
	line := lastLine(logs.String())
	for _, want := range []string{`"msg":"admin"`, `"key":"oncall"`, `"action":"hold"`, `"reason":"INC-42"`, `"ttl":"10m"`, `"model":"smart"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %s lacks %s", line, want)
		}
	}
	if v = f.admin("/admin/breakers/smart", `{"action":"disable","entry":"up/b","ttl":"1h","reason":"flaky"}`, "sk-admin").view(t); !v.Chain[0].Disabled ||
		v.Chain[0].DisabledReason != "flaky" || v.Chain[0].DisabledBy != "oncall" || !v.Chain[0].DisabledUntil.Equal(clk.now().Add(time.Hour)) || v.Routed != "up/c" {
		t.Fatalf("after disable: %+v", v)
	}
	if m := routed(); m != "up/c" {
		t.Fatalf("up/b disabled: routed to %s", m)
	}
	if v = f.admin("/admin/breakers/smart", `{"action":"enable","entry":"up/b"}`, "sk-admin").view(t); v.Chain[0].Disabled || v.Routed != "up/b" {
		t.Fatalf("after enable: %+v", v)
	}
	if v = f.admin("/admin/breakers/smart", `{"action":"release"}`, "sk-admin").view(t); v.Hold != nil || v.Routed != "up/a" {
		t.Fatalf("after release: %+v", v)
	}
	f.admin("/admin/breakers/smart", `{"action":"hold","ttl":"2m","reason":"again"}`, "sk-admin").view(t)
	clk.add(2*time.Minute + time.Second) // the hold ends by itself
	if m := routed(); m != "up/a" {
		t.Fatalf("after the hold's TTL: routed to %s", m)
	}
	f.admin("/admin/breakers/smart", `{"action":"hold","ttl":"5m"}`, "sk-admin").view(t)
	if v = f.admin("/admin/breakers/smart", `{"action":"reset"}`, "sk-admin").view(t); v.State != fallback.Primary || v.Hold != nil || v.OpenUntil != nil || v.Counters.FallbackActivated {
		t.Fatalf("after reset: %+v", v)
	}
	if n := strings.Count(logs.String(), `"msg":"admin"`); n != 7 {
		t.Errorf("%d admin log lines for 7 actions", n)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `"msg":"admin"`) {
			return lines[i]
		}
	}
	return ""
}

// TestAdminDirectModel: a direct upstream/model breaker is addressed
// path-escaped; held, it answers as a spent chain (503
// fallback_exhausted, GATEWAY.md §4, §9.2) with Retry-After, as a
// configured model without a chain does.
func TestAdminDirectModel(t *testing.T) {
	var hits atomic.Int32
	cfg := chain()
	cfg.Models = append(cfg.Models, Model{Name: "solo", Primary: "up/s"})
	f := newFixture(t, func(llmtest.Request) llmtest.Reply { hits.Add(1); return llmtest.Text("ok") }, cfg, Options{})
	f.admin("/admin/breakers/solo", `{"action":"hold","ttl":"1m"}`, "").view(t)
	if a := f.post(chatBody("solo", false)); a.status != http.StatusServiceUnavailable || a.errorField("code") != "fallback_exhausted" || a.errorField("type") != "fallback_exhausted" || hits.Load() != 0 {
		t.Fatalf("request to a held model without a chain: %d %s (%d reached it)", a.status, a.body, hits.Load())
	}
	if a := f.admin("/admin/breakers/up%2Fx", "", ""); a.status != http.StatusNotFound {
		t.Fatalf("unused direct model: %d", a.status)
	}
	v := f.admin("/admin/breakers/up%2Fx", `{"action":"hold","ttl":"1m","reason":"r"}`, "").view(t)
	if !v.Direct || v.Model != "up/x" || v.Routed != "" || v.OpenReason != "manual" {
		t.Fatalf("held direct model: %+v", v)
	}
	a := f.post(chatBody("up/x", false))
	if a.status != http.StatusServiceUnavailable || a.errorField("code") != "fallback_exhausted" || a.header.Get("Retry-After") == "" || hits.Load() != 0 {
		t.Fatalf("request to a held direct model: %d %s (%d reached it)", a.status, a.body, hits.Load())
	}
	if v := f.admin("/admin/breakers/up/x", "", "").view(t); v.Model != "up/x" {
		t.Fatalf("unescaped path: %+v", v)
	}
	if a := f.admin("/admin/breakers/smart", "", ""); a.status != 200 {
		t.Fatal(a.status)
	}
	if a := f.admin("/admin/breakersX", "", ""); a.status != http.StatusNotFound {
		t.Fatalf("/admin/breakersX: %d", a.status)
	}
}

// TestAdminAfterReload: a reload that keeps a model keeps what the admin
// API shows of it (the hold, the last failure), and /metrics follows the
// gateway in force.
func TestAdminAfterReload(t *testing.T) {
	script := llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(503)), "b": llmtest.Always(llmtest.Text("b"))})
	cfg := chain()
	cfg.Models[0].Breaker.TripThreshold = 1
	cfg.Retry.MaxRetries = -1
	f := newFixture(t, script, cfg, Options{})
	f.post(chatBody("smart", false))
	f.admin("/admin/breakers/smart", `{"action":"hold","ttl":"1h","reason":"INC-7"}`, "").view(t)
	cfg.Upstreams = []Upstream{{Name: "up", BaseURL: f.up.BaseURL()}}
	cfg.Models[0].Breaker.RecoveryTimeout = 5 * time.Minute
	cfg.Models = append(cfg.Models, Model{Name: "other", Primary: "up/c"})
	next, rep, err := f.gw.Reload(cfg)
	if err != nil || len(rep.Kept) != 1 {
		t.Fatalf("Reload: %v %+v", err, rep)
	}
	v := next.view(next.routeOf("smart"))
	if v.Hold == nil || v.Hold.Reason != "INC-7" || v.LastFailure == nil || v.LastFailure.Status != 503 || v.Thresholds.RecoveryTimeout != "5m0s" {
		t.Fatalf("after the reload: %+v (hold %+v, last failure %+v)", v, v.Hold, v.LastFailure)
	}
	next.routeOf("other").mgr.Hold(time.Now().Add(time.Hour), "")
	if n := testutil.CollectAndCount(f.gw.Registry(), "loopctl_model_open_until_seconds"); n != 2 {
		t.Errorf("%d open_until series after the reload, want 2 (smart and other)", n)
	}
}

// FuzzAdminAction: no body panics the admin action reader, a refusal always
// names a field, and an accepted body is one the actions can run.
func FuzzAdminAction(f *testing.F) {
	for _, s := range []string{`{"action":"hold","ttl":"10m","reason":"INC-42"}`, `{"action":"disable","entry":"up/b","ttl":"1h"}`,
		`{"action":"enable","entry":"up/c"}`, `{"action":"reset"}`, `{"action":"hold","ttl":"24h0m1s"}`, `{"x":1}`, `[]`, `{"action":null}`} {
		f.Add([]byte(s))
	}
	rt := &route{name: "smart", settings: fallback.Settings{Primary: "up/a", Chain: []string{"up/b", "up/c"}}}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := readAction(body, rt)
		if err != nil {
			if bf, ok := err.(*badField); !ok || bf.field == "" || bf.msg == "" {
				t.Fatalf("refusal %#v names no field", err)
			}
			return
		}
		switch a.Action {
		case "hold":
			if a.ttl <= 0 || a.ttl > MaxHold {
				t.Fatalf("accepted a hold of %v", a.ttl)
			}
		case "disable", "enable":
			if !inChain(rt, a.Entry) {
				t.Fatalf("accepted entry %q", a.Entry)
			}
		case "release", "reset":
		default:
			t.Fatalf("accepted action %q", a.Action)
		}
	})
}
