package gateway

import (
	"strconv"
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
	v := p.gw.view(p.gw.models["claude"])
	if b := memberIn(t, v, "pool/p", "b/m"); b.LastMinute == 0 || b.Share <= 0 {
		t.Errorf("b/m after serving: %+v; want its last minute and share", b)
	}
	if a := memberIn(t, v, "pool/p", "a/m"); !a.Disabled || a.LastMinute != 0 || a.OpenReason != "manual" {
		t.Errorf("a/m while disabled: %+v; want disabled (manual) with nothing in its last minute", a)
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

// TestPoolRequestsByOutcome: loopctl_pool_requests_total counts each
// member attempt once, where the walk settles it, by its outcome: a 429
// is rate_limit, a 400 no_verdict, a 500 failure, a served answer
// success.
func TestPoolRequestsByOutcome(t *testing.T) {
	cfg := Config{
		Pools: []Pool{{Name: "p", Affinity: "none", Breaker: Breaker{TripThreshold: 100},
			Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}, {Target: "c/m"}, {Target: "d/m"}}}},
		Models: []Model{{Name: "claude", Primary: "pool/p"}},
	}
	p := newPoolGW(t, cfg, Options{}, down("a", 429), down("b", 400), down("c", 500), serving("d"))
	for range 12 {
		if a := p.chat("claude", false); a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	body := scrape(p.gw)
	for member, outcome := range map[string]string{"a": "rate_limit", "b": "no_verdict", "c": "failure", "d": "success"} {
		series := `loopctl_pool_requests_total{member="` + member + `/m",outcome="` + outcome + `",pool="p"} `
		got := grepLines(body, series)
		want := strings.TrimSpace(strings.TrimPrefix(got, series))
		if n := p.count(member); got == "" || want != strconv.Itoa(n) {
			t.Errorf("%s/m: %q; want %s counted once per request it received (%d)", member, got, outcome, n)
		}
	}
	if n := strings.Count(grepLines(body, "loopctl_pool_requests_total{"), "\n") + 1; n != 4 {
		t.Errorf("%d series, want one per member:\n%s", n, grepLines(body, "loopctl_pool_requests_total{"))
	}
}
