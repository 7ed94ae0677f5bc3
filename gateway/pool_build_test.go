package gateway

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// poolConfig is a config with upstreams a, b (openai) and c (anthropic),
// pool "p" of a/m, b/m (weight 2) and c/m, and model "claude" whose primary
// is pool/p with the chain a/backup.
func poolConfig() Config {
	return Config{
		Upstreams: []Upstream{
			{Name: "a", BaseURL: "http://127.0.0.1:1/v1", APIKey: "ka"},
			{Name: "b", BaseURL: "http://127.0.0.1:2/v1", APIKey: "kb"},
			{Name: "c", API: APIAnthropic, BaseURL: "http://127.0.0.1:3", APIKey: "kc"},
		},
		Pools: []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m", Weight: 2}, {Target: "c/m"}},
			Breaker: Breaker{TripThreshold: 2, RecoveryTimeout: 5 * time.Second, SlowCallAfter: time.Second}}},
		Models: []Model{{Name: "claude", Primary: "pool/p", Chain: []string{"a/backup"}}},
	}
}

// buildPooled builds the gateway of cfg with New.
func buildPooled(t *testing.T, cfg Config, opt Options) *Gateway {
	t.Helper()
	g, err := New(cfg, opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

func TestPoolsAreBuilt(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	g := buildPooled(t, poolConfig(), Options{Now: func() time.Time { return now }})
	pools := g.poolsOf("claude")
	if len(pools) != 1 || pools[0] != g.poolNamed("p") || pools[0].entry != "pool/p" {
		t.Fatalf("poolsOf(claude) = %v, want pool p", pools)
	}
	pd := pools[0]
	if tg := g.models["claude"].targets["pool/p"]; tg.pool != pd || tg.up != nil {
		t.Fatalf("the route's pool/p target: pool %p (want %p), upstream %v (want none)", tg.pool, pd, tg.up)
	}
	if !g.models["claude"].openai {
		t.Error("a pool with an openai member serves embeddings: the route should say so")
	}
	for i, want := range []struct {
		ref    string
		weight float64
		api    string
	}{{"a/m", 1, APIOpenAI}, {"b/m", 2, APIOpenAI}, {"c/m", 1, APIAnthropic}} {
		m := pd.p.Member(i)
		if m.Name != want.ref || m.Weight != want.weight || m.SlowCallAfter != time.Second {
			t.Errorf("member %d = %s weight %v slow %v, want %s weight %v slow 1s", i, m.Name, m.Weight, m.SlowCallAfter, want.ref, want.weight)
		}
		if tg := pd.member(i); tg.ref != want.ref || tg.model != "m" || tg.up == nil || tg.up.api != want.api {
			t.Errorf("member %d's target = %+v, want %s on a %s upstream", i, tg, want.ref, want.api)
		}
		if m.Breaker != g.memberBreaker(want.ref) {
			t.Errorf("member %d's breaker is not the gateway's member breaker of %s", i, want.ref)
		}
	}
	if got := g.memberRefs(); len(got) != 3 {
		t.Errorf("memberRefs = %v, want the 3 members", got)
	}
	if g.memberBreaker("a/backup") != nil {
		t.Error("a chain entry has a member breaker: only pool members have one")
	}
}

func TestMemberBreakerSettingsAndClock(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	g := buildPooled(t, poolConfig(), Options{Now: func() time.Time { return now }})
	b := g.memberBreaker("a/m")
	for range 2 { // trip_threshold 2
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		p.Failure()
	}
	s := b.Snapshot()
	if s.State != breaker.Open || !s.OpenUntil.Equal(now.Add(5*time.Second)) {
		t.Fatalf("after 2 failures: %v until %v, want open until the gateway's now + 5s (%v)", s.State, s.OpenUntil, now.Add(5*time.Second))
	}
	if b.Name() != "member@a/m" {
		t.Errorf("member breaker named %q, want member@a/m", b.Name())
	}
}

func TestPoolsShareMemberBreakersAndFigures(t *testing.T) {
	cfg := poolConfig()
	cfg.Pools = append(cfg.Pools, Pool{Name: "q", Members: []PoolMember{{Target: "b/m"}, {Target: "a/other"}},
		Breaker: cfg.Pools[0].Breaker, Affinity: "none"})
	cfg.Models = append(cfg.Models, Model{Name: "gpt", Primary: "a/x", Chain: []string{"pool/q"}})
	g := buildPooled(t, cfg, Options{})
	p, q := g.poolNamed("p"), g.poolNamed("q")
	if p.p.Member(1).Breaker != q.p.Member(0).Breaker {
		t.Error("two pools listing b/m have two breakers for it: a deployment has one")
	}
	if got := g.poolsOf("gpt"); len(got) != 1 || got[0] != q {
		t.Errorf("poolsOf(gpt) = %v, want [q]", got)
	}
	// One Figures per gateway: an attempt on b/m through pool p is in
	// flight for pool q too.
	a, err := p.p.Pin(time.Now(), &pool.Request{}, 1, pool.Need{})
	if err != nil {
		t.Fatalf("Pin: %v", err)
	}
	if got := q.p.Status(time.Now(), 0).InFlight; got != 1 {
		t.Errorf("b/m in flight through pool q = %d, want 1 (one Figures per gateway)", got)
	}
	a.Cancel(time.Now())
}
