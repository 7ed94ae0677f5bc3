package gateway

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/browsertest"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestBrowserDashboardShowsTrip loads the gateway's /dashboard/ in headless
// Chromium, trips the model breaker of "smart" through the gateway (chat
// completions while its primary upstream model fails, one attempt each, until
// the breaker trips), and checks that the page shows the new state and the
// routed model within a second of the trip, without a reload. It saves a
// screenshot as an artifact.
func TestBrowserDashboardShowsTrip(t *testing.T) {
	up := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Error(500)),
		"b": llmtest.Always(llmtest.Text("from b")),
	}))
	us := httptest.NewServer(up)
	tripped := make(chan time.Time, 1)
	cfg := Config{
		Upstreams: []Upstream{{Name: "up", BaseURL: us.URL + "/v1", APIKey: "sk-upstream"}},
		Models:    []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}, Attempts: 1}},
		Retry:     Retry{MaxRetries: -1},
	}
	gw, err := New(cfg, Options{OnTransition: func(model string, tr fallback.Transition) {
		if model == "smart" && tr.To == fallback.Fallback {
			select {
			case tripped <- time.Now():
			default:
			}
		}
	}})
	if err != nil {
		us.Close()
		t.Fatal(err)
	}
	f := &fixture{t: t, gw: gw, srv: httptest.NewServer(gw)}
	t.Cleanup(func() { // registered first: runs after the browser has stopped
		f.srv.Close()
		gw.Close()
		up.Release()
		us.Close()
	})
	bctx := browsertest.Start(t, 15*time.Second)

	state := `[data-kind="model"][data-breaker="smart"] .state`
	routed := `[data-kind="model"][data-breaker="smart"] .active-model`
	if err := chromedp.Do(bctx, chromedp.Navigate(f.srv.URL+"/dashboard/"), chromedp.WaitVisible(state)); err != nil {
		t.Fatal(err)
	}
	if got, err := browsertest.Text(bctx, state); err != nil || got != "primary" {
		t.Fatalf("state before = %q, %v; want primary", got, err)
	}
	if got, err := browsertest.Text(bctx, routed); err != nil || got != "up/a" {
		t.Fatalf("routed model before = %q, %v; want up/a", got, err)
	}
	// The gateway has no tool breakers: no empty table.
	if toolsHidden, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById("tool-breakers").hidden`)); err != nil || !toolsHidden {
		t.Errorf("the tool-breaker table of a gateway without tool breakers: hidden %v, %v", toolsHidden, err)
	}

	var at time.Time
	for n := 1; at.IsZero(); n++ {
		if n > 10 {
			t.Fatal("the primary did not trip after 10 failed requests through the gateway")
		}
		if a := f.post(chatBody("smart", false)); a.status < 500 {
			t.Fatalf("request %d while the primary fails: status %d, body %s; want 5xx", n, a.status, a.body)
		}
		select {
		case at = <-tripped:
			t.Logf("the primary tripped on request %d", n)
		default:
		}
	}

	shown := `document.querySelector('` + state + `')?.textContent === "fallback" &&
		document.querySelector('` + routed + `')?.textContent === "up/b"`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](shown, chromedp.WithPollingTimeout(time.Second))); err != nil {
		got, _ := browsertest.Text(bctx, state)
		t.Fatalf("page did not show the trip within 1s (state shows %q): %v", got, err)
	}
	t.Logf("page showed the trip %v after it happened", time.Since(at).Round(time.Millisecond))
	if a := f.post(chatBody("smart", false)); a.status != 200 || !strings.Contains(a.body, "from b") {
		t.Errorf("after the trip: status %d, body %s; want 200 from b", a.status, a.body)
	}
	browsertest.Screenshot(t, bctx, "gateway-dashboard.png")
}
