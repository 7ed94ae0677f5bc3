package gateway

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

func TestPoolReloadKeepsATrippedMemberTripped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := threePool("none")
		p := newPoolGW(t, cfg, Options{}, down("a", 500), serving("b"), serving("c"), serving("d"))
		for p.gw.memberBreaker("a/m").State() != breaker.Open {
			p.chat("claude", false)
			time.Sleep(11 * time.Second) // a's failure penalty is forgotten after τ
		}
		tripped := p.gw.memberBreaker("a/m").Snapshot()
		figures := p.gw.pools.figures

		next := configCopy(p.gw.cfg)
		next.Pools[0].Breaker.RecoveryTimeout = time.Hour // takes effect from the next opening
		next.Pools[0].Members[1].Weight = 3               // weights may change: the entry is unchanged
		g2, rep, err := p.gw.Reload(next)
		if err != nil {
			t.Fatalf("Reload: %v", err)
		}
		if !slices.Contains(rep.Kept, "claude") {
			t.Errorf("Reloaded %+v: a pool whose member targets are unchanged keeps its model's breaker", rep)
		}
		mb := g2.memberBreaker("a/m")
		if mb != p.gw.memberBreaker("a/m") || mb.Snapshot() != tripped {
			t.Fatalf("after the reload a/m is %+v (the same breaker: %v), want it kept tripped: %+v", mb.Snapshot(), mb == p.gw.memberBreaker("a/m"), tripped)
		}
		if g2.pools.figures != figures {
			t.Error("the reload replaced the pools' figures")
		}
		if w := g2.poolNamed("p").p.Member(1).Weight; w != 3 {
			t.Errorf("b/m's weight after the reload is %v, want 3", w)
		}
		before := p.count("a")
		p.gw = g2
		for range 10 {
			if ans := p.chat("claude", false); ans.status != 200 {
				t.Fatalf("after the reload: %d %s", ans.status, ans.body)
			}
		}
		if p.count("a") != before {
			t.Errorf("a/m received %d requests while it stays open after the reload", p.count("a")-before)
		}
	})
}

func TestPoolReloadNewMembersStartANewModelBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := threePool("none")
		cfg.Models[0].Breaker.TripThreshold = 1
		p := newPoolGW(t, cfg, Options{}, down("a", 500), down("b", 500), down("c", 500), serving("d"), serving("e"))
		p.chat("claude", false) // every member fails: the model breaker trips
		if st := managers(p.gw)["claude"].State(); st != fallback.Fallback {
			t.Fatalf("the model breaker is %v, want fallback", st)
		}
		next := configCopy(p.gw.cfg)
		next.Pools[0].Members[2] = PoolMember{Target: "e/m"}
		g2, rep, err := p.gw.Reload(next)
		if err != nil {
			t.Fatalf("Reload: %v", err)
		}
		if !slices.Contains(rep.Started, "claude") {
			t.Errorf("Reloaded %+v: a pool entry whose member targets changed starts a new model breaker", rep)
		}
		if st := managers(g2)["claude"].State(); st != fallback.Primary {
			t.Errorf("the new model breaker is %v, want primary", st)
		}
		if g2.memberBreaker("c/m") != nil {
			t.Error("c/m keeps a member breaker after no pool lists it")
		}
		if g2.memberBreaker("a/m") != p.gw.memberBreaker("a/m") {
			t.Error("a/m, still listed, has a new member breaker")
		}
	})
}

func TestStoreNameCoversPoolMembers(t *testing.T) {
	pools := func(targets ...string) []Pool {
		var ms []PoolMember
		for _, tg := range targets {
			ms = append(ms, PoolMember{Target: tg, Weight: float64(len(tg))})
		}
		return []Pool{{Name: "p", Members: ms}}
	}
	m := Model{Name: "claude", Primary: "pool/p", Chain: []string{"up/b"}}
	base := storeNameIn(m, pools("a/m", "b/m"))
	for _, tc := range []struct {
		pools []Pool
		same  bool
	}{
		{pools("b/m", "a/m"), true}, // the set, not the order
		{pools("a/m", "b/m", "c/m"), false},
		{pools("a/m", "c/m"), false},
	} {
		if got := storeNameIn(m, tc.pools); (got == base) != tc.same || !strings.HasPrefix(got, "claude@") {
			t.Errorf("store name with %v = %q (first %q), want same: %v", tc.pools[0].Members, got, base, tc.same)
		}
	}
	plain := Model{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}
	if storeNameIn(plain, pools("a/m", "b/m")) != storeName(plain) {
		t.Error("a model without pool entries changed its store name")
	}
	if got := storeNameIn(Model{Name: "up/x", Primary: "up/x"}, nil); got != "up/x" {
		t.Errorf("a direct name's store name is %q", got)
	}
}

// configCopy returns cfg with its models and pools copied, so that a test
// may change them for a reload without touching the running gateway's.
func configCopy(cfg Config) Config {
	cfg.Models = slices.Clone(cfg.Models)
	cfg.Pools = slices.Clone(cfg.Pools)
	for i := range cfg.Pools {
		cfg.Pools[i].Members = slices.Clone(cfg.Pools[i].Members)
	}
	return cfg
}
