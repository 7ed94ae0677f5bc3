package gateway

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loopctl/loopctl-go/internal/browsertest"
)

// TestBrowserDashboardShowsMembers loads the gateway's /dashboard/ in
// headless Chromium and checks the member rows under the pool entry of
// "claude" (§11.5): one row per member, a tripped member's state, and a
// member disabled through the admin API shown with cause manual, without
// a reload of the page.
func TestBrowserDashboardShowsMembers(t *testing.T) {
	cfg := poolAdminConfig()
	cfg.AdminKeys = nil // the page sends no key: loopback with no keys may read and act
	f := newPoolFixture(t, cfg, Options{})
	bctx := browsertest.Start(t, 15*time.Second)
	card := `[data-kind="model"][data-breaker="claude"]`
	row := func(ref string) string {
		return card + ` [data-pool="pool/p"] [data-kind="member"][data-member="` + ref + `"]`
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(f.srv.URL+"/dashboard/"), chromedp.WaitVisible(row("up/c"))); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('`+card+` [data-kind="member"]').length`))
	if err != nil || rows != 3 {
		t.Fatalf("member rows of pool/p: %d, %v; want 3", rows, err)
	}
	if got, err := browsertest.Text(bctx, row("up/a")+" .state"); err != nil || got != "closed" {
		t.Fatalf("up/a's state before = %q, %v; want closed", got, err)
	}

	trip(t, f.gw, "up/a")
	f.admin("/admin/breakers/claude", `{"action":"disable","member":"up/b","reason":"INC-9"}`, "").members(t)
	shown := `document.querySelector('` + row("up/a") + ` .state')?.textContent === "open" &&
		document.querySelector('` + row("up/a") + ` .cause')?.textContent.includes("recovery_timeout") &&
		document.querySelector('` + row("up/b") + ` .cause')?.textContent === "until enabled (manual): INC-9"`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](shown, chromedp.WithPollingTimeout(2*time.Second))); err != nil {
		a, _ := browsertest.Text(bctx, row("up/a"))
		b, _ := browsertest.Text(bctx, row("up/b"))
		t.Fatalf("the page did not show the tripped and the disabled member within 2s (up/a: %q, up/b: %q): %v", a, b, err)
	}
	browsertest.Screenshot(t, bctx, "gateway-dashboard-pool.png")
}
