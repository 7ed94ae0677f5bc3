package gateway

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

func TestPoolHedgePicksASecondMember(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := threePool("none")
				cfg.Models[0].HedgeAfter = 500 * time.Millisecond
				slow := deployment{name: "a", script: llmtest.Delayed(2*time.Second, llmtest.Always(llmtest.Text("from a")))}
				p := newPoolGW(t, cfg, Options{}, slow, serving("b"), serving("c"), serving("d"))
				hedged := 0
				for i := 0; p.count("a") == 0 && i < 50; i++ {
					var a answer
					took := elapsed(func() { a = p.chat("claude", stream) })
					if a.status != 200 || a.header.Get("X-Loopctl-Model") == "a/m" {
						t.Fatalf("%d by %q: the slow member served", a.status, a.header.Get("X-Loopctl-Model"))
					}
					if p.count("a") > 0 {
						hedged++
						if took != 500*time.Millisecond || a.header.Get("X-Loopctl-Attempts") != "2" {
							t.Errorf("the hedged request took %v with x-loopctl-attempts %q, want 500ms and 2", took, a.header.Get("X-Loopctl-Attempts"))
						}
					} else if took != 0 {
						t.Errorf("a request to a fast member took %v", took)
					}
				}
				if hedged != 1 {
					t.Fatalf("no request met the slow member in 50")
				}
				if p.count("d") != 0 {
					t.Error("the chain's backup was used: the hedge stays in the pool")
				}
				time.Sleep(3 * time.Second) // the cancelled slow answer has nothing left to do
				if s := p.gw.memberBreaker("a/m").Snapshot(); s.ConsecutiveFailures != 1 {
					t.Errorf("a/m counted %d failures, want 1: a loser that waited hedge_after is a slow call", s.ConsecutiveFailures)
				}
				if s := managers(p.gw)["claude"].Snapshot(); s.ConsecutiveFailures != 0 {
					t.Errorf("the model breaker counted %d failures for a served pool attempt", s.ConsecutiveFailures)
				}
			})
		})
	}
}

func TestPoolHedgesToTheChainWithNoOtherMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{
			Pools: []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}}}},
			Models: []Model{{Name: "claude", Primary: "pool/p", Chain: []string{"d/backup"},
				HedgeAfter: 500 * time.Millisecond, Breaker: Breaker{TripThreshold: 5}}},
		}
		slow := deployment{name: "a", script: llmtest.Delayed(2*time.Second, llmtest.Always(llmtest.Text("from a")))}
		limited := deployment{name: "b", script: llmtest.Always(llmtest.RateLimit("600"))}
		p := newPoolGW(t, cfg, Options{}, slow, limited, serving("d"))
		for p.count("b") == 0 { // b's 429 opens it for 600 s
			p.chat("claude", false)
		}
		time.Sleep(3 * time.Second)
		before := p.count("a")
		var a answer
		took := elapsed(func() { a = p.chat("claude", false) })
		if a.status != 200 || a.header.Get("X-Loopctl-Model") != "d/backup" || took != 500*time.Millisecond {
			t.Fatalf("%d by %q after %v, want the chain's backup at hedge_after (500ms): no other member is admitted", a.status, a.header.Get("X-Loopctl-Model"), took)
		}
		if p.count("a") != before+1 || a.header.Get("X-Loopctl-Attempts") != "2" {
			t.Errorf("a got %d requests, x-loopctl-attempts %q: want the slow member tried, then the hedge", p.count("a")-before, a.header.Get("X-Loopctl-Attempts"))
		}
	})
}
