package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// /metrics has the brief's gateway and breaker metrics; the request log
// has one line per request with the served model and attempts, and never
// a key.
func TestMetricsAndLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		cfg := withKeys(chain())
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{
			"a": llmtest.Always(llmtest.Error(503)),
			"b": llmtest.Always(llmtest.Text("from b")),
		}), cfg, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		if a := b.post(chatBody("smart", false), "Authorization", "Bearer sk-client"); a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
		b.post(chatBody("smart", false), "Authorization", "Bearer sk-client-wrong")

		rec := httptest.NewRecorder()
		scrapeReq := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		scrapeReq.Header.Set("Authorization", "Bearer sk-client") // client keys are set: /metrics needs one (§7)
		b.gw.ServeHTTP(rec, scrapeReq)
		body, _ := io.ReadAll(rec.Body)
		for _, want := range []string{
			`loopctl_gateway_requests_total{api="chat",model="smart",outcome="success",upstream_model="up/b"} 1`,
			`loopctl_gateway_requests_total{api="chat",model="",outcome="invalid",upstream_model=""} 1`,
			`loopctl_gateway_fallbacks_total{from="up/a",model="smart",to="up/b"} 1`,
			`loopctl_gateway_upstream_first_byte_seconds_count{upstream_model="up/b"} 1`,
			`loopctl_gateway_overhead_seconds_count 2`,
			`loopctl_breaker_state{breaker="smart",kind="model",state="fallback"} 1`,
			`loopctl_breaker_state{breaker="smart",kind="model",state="primary"} 0`,
			`loopctl_breaker_transitions_total{breaker="smart",from="primary",kind="model",to="fallback"} 1`,
			`loopctl_calls_total{breaker="smart",kind="model",outcome="failure"} 3`,
			`loopctl_retries_total{breaker="smart",kind="model",reason="transient"} 9`,
		} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		if strings.Contains(string(body), "sk-") {
			t.Error("/metrics shows a key")
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], `"msg":"request","api":"chat","model":"smart","served":"up/b","attempts":4,"status":200,"outcome":"success"`) ||
			!strings.Contains(lines[0], `"client":"team-a"`) || !strings.Contains(lines[1], `"status":401`) {
			t.Errorf("log:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), "sk-") {
			t.Errorf("a key in the log:\n%s", logs.String())
		}
	})
}

func TestEndpoints(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Text("x")), chain(), Options{})
	for _, tc := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/v1/models", 200, `{"object":"list","data":[{"id":"smart","object":"model","created":0,"owned_by":"loopctl"}]}`},
		{"GET", "/healthz", 200, "ok"},
		{"GET", "/readyz", 200, "ready"},
		{"GET", "/metrics", 200, "loopctl_breaker_state"},
		{"GET", "/v1/chat/completions", 405, "method not allowed"},
		{"GET", "/dashboard/", 200, "<html"},
		{"GET", "/dashboard/state.json", 200, `"smart"`},
		{"GET", "/v1/nothing", 404, `"type":"invalid_request_error"`},
	} {
		req, _ := http.NewRequest(tc.method, f.srv.URL+tc.path, nil)
		res, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !strings.Contains(string(b), tc.contains) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, res.StatusCode, b)
		}
	}
	f.srv.Client().CloseIdleConnections()
}

// scrape returns the gateway's /metrics text.
func scrape(g *Gateway) string {
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// The dashboard seam: Options.Dashboard is served under /dashboard/, fed
// by LocalBreakers and Options.OnTransition.
func TestDashboardSeam(t *testing.T) {
	var seen []string
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "dash "+r.URL.Path) })
	f := newFixture(t, llmtest.ByModel(nil), chain(), Options{
		Dashboard:    dash,
		OnTransition: func(model string, tr fallback.Transition) { seen = append(seen, model+" "+tr.To.String()) },
	})
	f.post(chatBody("smart", false))
	f.post(chatBody("up/x", false))
	bs := f.gw.LocalBreakers()
	if len(bs) != 2 || bs[0].Name != "smart" || bs[0].Settings.Primary != "up/a" || bs[1].Name != "up/x" || bs[1].Manager == nil {
		t.Errorf("LocalBreakers %+v", bs)
	}
	if len(seen) == 0 || seen[0] != "smart fallback" {
		t.Errorf("transitions %v", seen)
	}
	res, err := f.srv.Client().Get(f.srv.URL + "/dashboard/state.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "dash /state.json" {
		t.Errorf("got %q", b)
	}
	f.srv.Client().CloseIdleConnections()
}
