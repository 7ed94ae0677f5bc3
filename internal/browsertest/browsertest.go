// Package browsertest starts headless Chromium for tests that check a page
// in a real browser, driven with chromedp.
package browsertest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start launches headless Chromium (the Debian package chromium) and returns
// a chromedp context for one tab, bounded by timeout. The test fails with
// an install hint when chromium is not on PATH. The browser process is
// stopped, and waited for, when the test ends.
func Start(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: install with: apt-get install -y chromium")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1200, 900))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		bcancel()
		acancel() // waits for the browser process to exit
		cancel()
	})
	return bctx
}

// Screenshot saves a full-page PNG of the tab as name in the test's
// artifact directory and returns its path.
func Screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", file)
	return file
}

// Text returns the text content of the first element matching the CSS
// selector sel ("" when none matches). It reads in one evaluation, so a page
// that re-renders between the query and the read cannot make it fail (as
// chromedp.Text can, with "No node with given id found").
func Text(ctx context.Context, sel string) (string, error) {
	q, err := json.Marshal(sel)
	if err != nil {
		return "", err
	}
	return chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+string(q)+`)?.textContent ?? ""`))
}
