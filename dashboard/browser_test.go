package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserShowsTrip loads the page in headless Chromium, trips a model
// breaker and a tool breaker, and checks that the page shows both new states
// within a second, without a reload. It saves a screenshot as an artifact.
func TestBrowserShowsTrip(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: install with: apt-get install -y chromium")
	}
	f := newFixture(t, nil)
	mux := http.NewServeMux()
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", f.h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1200, 900))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer func() {
		bcancel()
		acancel() // waits for the browser process to exit
	}()

	model := `[data-kind="model"][data-breaker="demo"] .state`
	tool := `tr[data-kind="tool"][data-breaker="search"] td:nth-child(3) .state`
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/dashboard/"), chromedp.WaitVisible(model)); err != nil {
		t.Fatal(err)
	}
	if got, err := chromedp.Run(bctx, chromedp.Text(model)); err != nil || got != "primary" {
		t.Fatalf("model state before = %q, %v; want primary", got, err)
	}

	f.trip()
	start := time.Now()
	shown := `document.querySelector('` + model + `')?.textContent === "fallback" &&
		document.querySelector('` + tool + `')?.textContent === "open"`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](shown, chromedp.WithPollingTimeout(time.Second))); err != nil {
		got, _ := chromedp.Run(bctx, chromedp.Text(model))
		t.Fatalf("page did not show the trip within 1s (model shows %q): %v", got, err)
	}
	t.Logf("page showed the trip %v after it happened", time.Since(start).Round(time.Millisecond))
	routed, err := chromedp.Run(bctx, chromedp.Text(`[data-breaker="demo"] .active-model`))
	if err != nil || routed != "gpt-b" {
		t.Errorf("routed model shown = %q, %v; want gpt-b", routed, err)
	}

	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.ArtifactDir(), "dashboard.png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", file)
}
