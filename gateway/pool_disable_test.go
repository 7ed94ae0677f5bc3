package gateway

import (
	"strings"
	"testing"
	"time"
)

// TestDisabledMemberIsNotAdmitted: a member disabled by hand gets no
// request while its disable lasts, in every pool that lists it, and gets
// them again after its TTL (on the gateway's clock, lazily); with every
// member of a pool without a chain disabled, the pool row answers 503
// pool_unavailable (no provider's say) with Retry-After at the disable's
// end. Each member attempt is counted in loopctl_pool_requests_total.
func TestDisabledMemberIsNotAdmitted(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)}
	cfg := threePool("none")
	cfg.Models = append(cfg.Models, Model{Name: "solo", Primary: "pool/p"})
	p := newPoolGW(t, cfg, Options{Now: clk.now}, serving("a"), serving("b"), down("c", 500), serving("d"))
	off := p.gw.pools.off
	off.disable("a/m", clk.now().Add(time.Minute), "INC-1", "oncall")
	for range 20 {
		if a := p.chat("claude", false); a.status != 200 {
			t.Fatalf("with a/m disabled: %d %s", a.status, a.body)
		}
	}
	if n := p.count("a"); n != 0 {
		t.Errorf("a/m, disabled, received %d requests", n)
	}
	if p.count("b") == 0 {
		t.Error("b/m received nothing: the pool should serve on its other members")
	}
	body := scrape(p.gw)
	if !strings.Contains(body, `loopctl_pool_requests_total{member="b/m",outcome="success",pool="p"}`) ||
		!strings.Contains(body, `loopctl_pool_requests_total{member="c/m",outcome="failure",pool="p"}`) {
		t.Errorf("the member attempts are not counted by outcome:\n%s", grepLines(body, "loopctl_pool_requests_total"))
	}
	if strings.Contains(body, `member="a/m",outcome=`) {
		t.Errorf("a disabled member has attempts counted:\n%s", grepLines(body, "loopctl_pool_requests_total"))
	}

	for _, ref := range []string{"b/m", "c/m"} {
		off.disable(ref, clk.now().Add(30*time.Second), "", "")
	}
	a := p.chat("solo", false)
	if a.status != 503 || a.errorField("code") != "pool_unavailable" || a.header.Get("Retry-After") != "30" {
		t.Errorf("every member disabled: %d Retry-After %q %s; want 503 pool_unavailable, Retry-After 30 (the earliest disable's end)",
			a.status, a.header.Get("Retry-After"), a.body)
	}
	clk.add(time.Minute)
	before := p.count("a")
	for range 20 {
		p.chat("claude", false)
	}
	if p.count("a") == before {
		t.Error("a/m got nothing after its disable's TTL ran out")
	}
}
