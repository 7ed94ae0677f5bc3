package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loopctl/loopctl-go/internal/browsertest"
)

// TestBrowserShowsTrip loads the page in headless Chromium, trips a model
// breaker and a tool breaker, and checks that the page shows both new states
// within a second, without a reload. It saves a screenshot as an artifact.
func TestBrowserShowsTrip(t *testing.T) {
	f := newFixture(t, nil)
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", f.h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close) // after the browser stops (cleanups run last first)
	bctx := browsertest.Start(t, 15*time.Second)

	model := `[data-kind="model"][data-breaker="demo"] .state`
	tool := `tr[data-kind="tool"][data-breaker="search"] td:nth-child(3) .state`
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/dashboard/"), chromedp.WaitVisible(model)); err != nil {
		t.Fatal(err)
	}
	if got, err := browsertest.Text(bctx, model); err != nil || got != "primary" {
		t.Fatalf("model state before = %q, %v; want primary", got, err)
	}

	f.trip()
	start := time.Now()
	shown := `document.querySelector('` + model + `')?.textContent === "fallback" &&
		document.querySelector('` + tool + `')?.textContent === "open"`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](shown, chromedp.WithPollingTimeout(time.Second))); err != nil {
		got, _ := browsertest.Text(bctx, model)
		t.Fatalf("page did not show the trip within 1s (model shows %q): %v", got, err)
	}
	t.Logf("page showed the trip %v after it happened", time.Since(start).Round(time.Millisecond))
	routed, err := browsertest.Text(bctx, `[data-breaker="demo"] .active-model`)
	if err != nil || routed != "gpt-b" {
		t.Errorf("routed model shown = %q, %v; want gpt-b", routed, err)
	}
	if until, err := browsertest.Text(bctx, `[data-breaker="demo"] .open-until`); err != nil || !strings.HasSuffix(until, "(recovery_timeout)") {
		t.Errorf("open until shown = %q, %v; want a time and (recovery_timeout)", until, err)
	}
	// The trip count and the cooldown in force (SEMANTICS §9.1).
	if trips, err := browsertest.Text(bctx, `[data-breaker="demo"] .trips`); err != nil || trips != "1 (cooldown 1m0s)" {
		t.Errorf("trips shown = %q, %v; want 1 (cooldown 1m0s)", trips, err)
	}

	// An operator's hold: the page shows until when and why.
	f.m.Hold(time.Now().Add(10*time.Minute), "INC-42")
	held := `document.querySelector('[data-breaker="demo"] .open-until')?.textContent.endsWith("(manual)") &&
		document.querySelector('[data-breaker="demo"] .hold')?.textContent.endsWith(": INC-42")`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](held, chromedp.WithPollingTimeout(time.Second))); err != nil {
		got, _ := browsertest.Text(bctx, `[data-breaker="demo"] .open-until`)
		t.Fatalf("page did not show the hold within 1s (open until shows %q): %v", got, err)
	}

	browsertest.Screenshot(t, bctx, "dashboard.png")
}
