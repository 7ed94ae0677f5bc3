package gateway

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// poolAdminConfig has pools p (up/a, up/b weight 2, up/c) and q (up/b,
// up/d); model claude: pool/p then up/x; gpt: up/y then pool/q; plain:
// up/z; admin key "oncall".
func poolAdminConfig() Config {
	return Config{
		Pools: []Pool{
			{Name: "p", Members: []PoolMember{{Target: "up/a"}, {Target: "up/b", Weight: 2}, {Target: "up/c"}},
				Breaker: Breaker{TripThreshold: 2, RecoveryTimeout: 5 * time.Second}},
			{Name: "q", Members: []PoolMember{{Target: "up/b"}, {Target: "up/d"}},
				Breaker: Breaker{TripThreshold: 2, RecoveryTimeout: 5 * time.Second}},
		},
		Models: []Model{
			{Name: "claude", Primary: "pool/p", Chain: []string{"up/x"}},
			{Name: "gpt", Primary: "up/y", Chain: []string{"pool/q"}},
			{Name: "plain", Primary: "up/z"},
		},
		AdminKeys: []ClientKey{{Name: "oncall", Key: "sk-admin"}},
	}
}

// newPoolFixture is newFixture for a config with pools, its upstream "up"
// answering every request with "ok".
func newPoolFixture(t *testing.T, cfg Config, opt Options) *fixture {
	t.Helper()
	return newFixture(t, llmtest.Always(llmtest.Text("ok")), cfg, opt)
}

// trip opens the member breaker of ref with failures.
func trip(t *testing.T, g *Gateway, ref string) {
	t.Helper()
	b := g.memberBreaker(ref)
	for b.State() != breaker.Open {
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("Allow %s: %v", ref, err)
		}
		p.Failure()
	}
}

// members decodes a member action's answer.
func (a answer) members(t *testing.T) MemberActionView {
	t.Helper()
	var v MemberActionView
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &v) != nil {
		t.Fatalf("want a member action's answer, got %d %s", a.status, a.body)
	}
	return v
}

// memberIn returns the view of ref in v's pool entry (failing without one).
func memberIn(t *testing.T, v BreakerView, entry, ref string) MemberView {
	t.Helper()
	for _, p := range v.Pools {
		if p.Entry != entry {
			continue
		}
		for _, m := range p.Members {
			if m.Member == ref {
				return m
			}
		}
	}
	t.Fatalf("%s: no member %s in %s (pools %+v)", v.Model, ref, entry, v.Pools)
	return MemberView{}
}

// TestAdminMemberActions: disable, enable and reset with member act on the
// deployment in every pool that lists it and answer with every model whose
// pools list it (§11.5); each is one log line naming the admin key.
func TestAdminMemberActions(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)}
	var logs bytes.Buffer
	f := newPoolFixture(t, poolAdminConfig(), Options{Now: clk.now, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	g := f.gw

	v := f.admin("/admin/breakers/claude", `{"action":"disable","member":"up/b","ttl":"1h","reason":"INC-7"}`, "sk-admin").members(t)
	if v.Member != "up/b" || len(v.Breakers) != 2 || v.Breakers[0].Model != "claude" || v.Breakers[1].Model != "gpt" {
		t.Fatalf("disable up/b answered %+v; want member up/b with the views of claude and gpt (both pools list it)", v)
	}
	end := clk.now().Add(time.Hour)
	for _, bv := range []struct {
		view  BreakerView
		entry string
	}{{v.Breakers[0], "pool/p"}, {v.Breakers[1], "pool/q"}} {
		m := memberIn(t, bv.view, bv.entry, "up/b")
		if !m.Disabled || m.OpenReason != "manual" || m.OpenUntil == nil || !m.OpenUntil.Equal(end) ||
			m.DisabledBy != "oncall" || m.DisabledReason != "INC-7" || !m.DisabledUntil.Equal(end) {
			t.Errorf("%s after disable: %+v; want disabled until %v by oncall for INC-7, cause manual", bv.entry, m, end)
		}
	}
	if until, ok := g.pools.off.disabled("up/b", clk.now()); !ok || !until.Equal(end) {
		t.Errorf("disable set: up/b %v %v, want disabled until %v", until, ok, end)
	}
	if !strings.Contains(logs.String(), `"key":"oncall","action":"disable","model":"claude","member":"up/b","reason":"INC-7","ttl":"1h"`) {
		t.Errorf("no log line for the disable: %s", logs.String())
	}

	v = f.admin("/admin/breakers/gpt", `{"action":"enable","member":"up/b"}`, "sk-admin").members(t)
	if m := memberIn(t, v.Breakers[0], "pool/p", "up/b"); m.Disabled || m.OpenReason != "" || m.OpenUntil != nil {
		t.Errorf("after enable through gpt, claude's up/b: %+v; want back in rotation", m)
	}

	trip(t, g, "up/a")
	if a := f.admin("/admin/breakers/claude", `{"action":"reset"}`, "sk-admin"); a.status != http.StatusOK {
		t.Fatalf("model reset: %d %s", a.status, a.body)
	}
	if s := g.memberBreaker("up/a").State(); s != breaker.Open {
		t.Errorf("a model's reset reset its member up/a too (%v): it resets its own breaker only", s)
	}
	v = f.admin("/admin/breakers/claude", `{"action":"reset","member":"up/a"}`, "sk-admin").members(t)
	if m := memberIn(t, v.Breakers[0], "pool/p", "up/a"); m.State != breaker.Closed || m.Trips != 0 || m.OpenUntil != nil {
		t.Errorf("after reset of up/a: %+v; want closed with n = 0", m)
	}
	if len(v.Breakers) != 1 {
		t.Errorf("reset up/a answered %d models, want claude's only", len(v.Breakers))
	}
	if !strings.Contains(logs.String(), `"action":"reset","model":"claude","member":"up/a"`) {
		t.Errorf("no log line for the member reset: %s", logs.String())
	}
}

// TestAdminMemberRefusals: every wrong member action is refused as the
// existing admin errors are (400 naming the field, 404 for an unknown
// model) and changes nothing.
func TestAdminMemberRefusals(t *testing.T) {
	f := newPoolFixture(t, poolAdminConfig(), Options{})
	for _, tc := range []struct {
		model, body string
		status      int
		param, says string
	}{
		{"claude", `{"action":"hold","member":"up/a","ttl":"10m"}`, 400, "member", "no member hold"},
		{"claude", `{"action":"release","member":"up/a"}`, 400, "member", "no member hold"},
		{"claude", `{"action":"disable","member":"up/a","ttl":"25h"}`, 400, "ttl", "24h"},
		{"claude", `{"action":"disable","member":"up/a","ttl":"soon"}`, 400, "ttl", "duration"},
		{"claude", `{"action":"disable","member":"up/a","entry":"up/x"}`, 400, "member", "do not go together"},
		{"claude", `{"action":"disable","member":"up/d"}`, 400, "member", "in no pool of claude"},
		{"claude", `{"action":"enable","member":"up/x"}`, 400, "member", "in no pool of claude"},
		{"claude", `{"action":"reset","member":"pool/p"}`, 400, "member", "in no pool of claude"},
		{"plain", `{"action":"reset","member":"up/a"}`, 400, "member", "names no pool"},
		{"claude", `{"action":"disable"}`, 400, "entry", "or member"},
		{"claude", `{"action":"enable","member":"up/a","ttl":"1h"}`, 400, "ttl", "does not apply"},
		{"claude", `{"action":"reset","member":"up/a","reason":"x"}`, 400, "reason", "does not apply"},
		{"nosuch", `{"action":"reset","member":"up/a"}`, 404, "", "no model"},
	} {
		a := f.admin("/admin/breakers/"+tc.model, tc.body, "sk-admin")
		if a.status != tc.status || tc.param != "" && a.errorField("param") != tc.param ||
			!strings.Contains(a.body, tc.says) {
			t.Errorf("%s %s: %d param %v %s; want %d naming %q, saying %q", tc.model, tc.body, a.status,
				a.errorField("param"), a.body, tc.status, tc.param, tc.says)
		}
	}
	if len(f.gw.pools.off.on) != 0 {
		t.Errorf("a refused action disabled members: %v", f.gw.pools.off.on)
	}
	if a := f.admin("/admin/breakers/claude", `{"action":"disable","member":"up/a"}`, ""); a.status != http.StatusUnauthorized {
		t.Errorf("a member action without an admin key: %d, want 401", a.status)
	}
}

// TestAdminPoolView: GET /admin/breakers/{model} lists each pool entry's
// members: a tripped one with its cooldown and trip count, one disabled by
// hand with cause manual until enabled, and one whose disable's TTL has
// run out back in rotation (lazily, on the clock).
func TestAdminPoolView(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)}
	f := newPoolFixture(t, poolAdminConfig(), Options{Now: clk.now})
	trip(t, f.gw, "up/a")
	f.admin("/admin/breakers/claude", `{"action":"disable","member":"up/c","reason":"key rotated"}`, "sk-admin").members(t)
	f.admin("/admin/breakers/claude", `{"action":"disable","member":"up/b","ttl":"10m"}`, "sk-admin").members(t)
	clk.add(10 * time.Minute)

	v := f.admin("/admin/breakers/claude", "", "sk-admin").view(t)
	if len(v.Pools) != 1 || v.Pools[0].Entry != "pool/p" || len(v.Pools[0].Members) != 3 {
		t.Fatalf("claude's pools: %+v; want pool/p with its 3 members", v.Pools)
	}
	a := memberIn(t, v, "pool/p", "up/a")
	if a.State != breaker.Open || a.OpenReason != "recovery_timeout" || a.Trips != 1 || a.Disabled ||
		a.OpenUntil == nil || !a.OpenUntil.Equal(time.Date(2026, 12, 7, 2, 0, 5, 0, time.UTC)) || a.ConsecutiveFailures != 2 {
		t.Errorf("tripped up/a: %+v; want open until 02:00:05 (recovery_timeout), 1 trip", a)
	}
	c := memberIn(t, v, "pool/p", "up/c")
	if !c.Disabled || c.OpenReason != "manual" || c.OpenUntil != nil || c.DisabledUntil != nil ||
		c.DisabledReason != "key rotated" || c.DisabledBy != "oncall" || c.State != breaker.Closed {
		t.Errorf("disabled up/c: %+v; want disabled until enabled, cause manual, its breaker closed", c)
	}
	b := memberIn(t, v, "pool/p", "up/b")
	if b.Disabled || b.OpenReason != "" || b.Weight != 2 || b.InFlight != 0 || b.Share != 0 ||
		b.Latency != (LatencyView{}) || b.Headroom != (HeadroomView{}) {
		t.Errorf("up/b after its 10m disable ran out: %+v; want in rotation, weight 2, nothing measured", b)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(f.admin("/admin/breakers/claude", "", "sk-admin").body), &raw)
	m0 := raw["pools"].([]any)[0].(map[string]any)["members"].([]any)[0].(map[string]any)
	for _, k := range []string{"member", "weight", "state", "open_until", "open_reason", "trips", "latency",
		"in_flight", "headroom", "last_minute", "share", "disabled"} {
		if _, ok := m0[k]; !ok {
			t.Errorf("member JSON has no %q: %v", k, m0)
		}
	}
	list := f.admin("/admin/breakers", "", "sk-admin")
	if !strings.Contains(list.body, `"entry":"pool/q"`) || !strings.Contains(list.body, `"member":"up/d"`) {
		t.Errorf("the list view does not show the pools' members: %s", list.body)
	}
	if v := f.admin("/admin/breakers/plain", "", "sk-admin").view(t); v.Pools != nil {
		t.Errorf("a model without pools shows pools: %+v", v.Pools)
	}
	if v := f.admin("/admin/breakers/claude", `{"action":"hold","ttl":"1m"}`, "sk-admin").view(t); v.State != fallback.Fallback {
		t.Errorf("a model's own hold beside its pools: %v", v.State)
	}
}
