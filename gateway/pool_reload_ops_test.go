package gateway

import (
	"testing"
	"time"
)

// TestMemberDisableAcrossReload: a reload keeps a member's disable while
// a pool still lists its deployment (as it keeps its member breaker), and
// drops it with the deployment.
func TestMemberDisableAcrossReload(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)}
	cfg := poolAdminConfig()
	cfg.Upstreams = []Upstream{{Name: "up", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}}
	g := buildPooled(t, cfg, Options{Now: clk.now})
	g.pools.off.disable("up/a", clk.now().Add(time.Hour), "INC-1", "oncall")
	g.pools.off.disable("up/d", time.Time{}, "", "")

	cfg.Pools = cfg.Pools[:1] // q (up/b, up/d) goes
	cfg.Models = []Model{cfg.Models[0], cfg.Models[2]}
	next, _, err := g.Reload(cfg)
	if err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if until, ok := next.pools.off.disabled("up/a", clk.now()); !ok || !until.Equal(clk.now().Add(time.Hour)) {
		t.Errorf("up/a after the reload: disabled %v until %v; want its disable kept (pool p still lists it)", ok, until)
	}
	if _, ok := next.pools.off.disabled("up/d", clk.now()); ok {
		t.Error("up/d is still disabled after the reload dropped its only pool")
	}
	if v := next.view(next.models["claude"]); !memberIn(t, v, "pool/p", "up/a").Disabled {
		t.Error("the reloaded gateway's admin view does not show up/a disabled")
	}
}
