package gateway

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

func TestPoolWeightsSpreadRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights []float64
		check   func(t *testing.T, n map[string]int)
	}{
		{"equal weights: an equal share each", nil, func(t *testing.T, n map[string]int) {
			for _, m := range []string{"a", "b", "c"} {
				if n[m] < 70 || n[m] > 130 {
					t.Errorf("%s served %d of 300 (want 100 ± 30): %v", m, n[m], n)
				}
			}
		}},
		{"weight 2 on c: c takes more at light load, every member some", []float64{1, 1, 2}, func(t *testing.T, n map[string]int) {
			if n["c"] <= n["a"]+n["b"] || n["a"] == 0 || n["b"] == 0 {
				t.Errorf("shares %v: want c above a and b together, a and b above 0", n)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPoolGW(t, threePool("none", tc.weights...), Options{}, serving("a"), serving("b"), serving("c"), serving("d"))
				for i := range 300 {
					if a := p.chat("claude", i%4 == 0); a.status != 200 {
						t.Fatalf("request %d: %d %s", i, a.status, a.body)
					}
				}
				tc.check(t, map[string]int{"a": p.count("a"), "b": p.count("b"), "c": p.count("c")})
				if p.count("d") != 0 {
					t.Errorf("the chain's backup served %d requests while the pool was healthy", p.count("d"))
				}
			})
		})
	}
}

func TestPoolMemberAnswersWithItsOwnKeyAndName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPoolGW(t, threePool("none"), Options{}, serving("a"), serving("b"), serving("c"), serving("d"))
		for range 30 {
			a := p.chat("claude", false)
			served := a.header.Get("X-Loopctl-Model")
			up, _, _ := strings.Cut(served, "/")
			if a.status != 200 || !strings.Contains(a.body, "from "+up) || served != up+"/m" {
				t.Fatalf("%d %s, x-loopctl-model %q: want a member's answer named as it", a.status, a.body, served)
			}
			if got := a.header.Get("X-Loopctl-Attempts"); got != "1" {
				t.Errorf("x-loopctl-attempts %q, want 1", got)
			}
		}
		for _, m := range []string{"a", "b", "c"} {
			for _, r := range p.ups[m].Requests() {
				if got := r.Header.Get("Authorization"); got != "Bearer sk-"+m {
					t.Errorf("%s received Authorization %q, want its own key", m, got)
				}
				if r.Model != "m" {
					t.Errorf("%s received model %q, want m", m, r.Model)
				}
			}
		}
	})
}

func TestPoolFailingMemberIsInvisible(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPoolGW(t, threePool("none"), Options{}, down("a", 500), serving("b"), serving("c"), serving("d"))
				for i := range 40 {
					a := p.chat("claude", stream)
					if a.status != 200 || strings.Contains(a.body, "error") {
						t.Fatalf("request %d: %d %s: a member's failure reached the client", i, a.status, a.body)
					}
					if m := a.header.Get("X-Loopctl-Model"); m != "b/m" && m != "c/m" {
						t.Fatalf("request %d served by %q", i, m)
					}
					// A second apart: a failing member's penalty keeps it
					// out until its estimate is forgotten (τ = 10 s).
					time.Sleep(time.Second)
				}
				if got := p.count("a"); got != 2 {
					t.Errorf("a received %d requests in 40 s, want 2 (trip_threshold, the penalty between) and then none while open", got)
				}
				if s := p.gw.memberBreaker("a/m").Snapshot(); s.State != breaker.Open {
					t.Errorf("a's member breaker is %v, want open", s.State)
				}
				if s := managers(p.gw)["claude"].Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
					t.Errorf("the model breaker is %v with %d failures: a member's failures are not the pool's", s.State, s.ConsecutiveFailures)
				}
				if p.count("d") != 0 {
					t.Errorf("the chain's backup served %d requests", p.count("d"))
				}
			})
		})
	}
}

func TestPoolAttemptsCountEveryMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// a and b fail, c serves: with affinity off the order is the
		// pool's, so look for a request that met a failing member first.
		p := newPoolGW(t, threePool("none"), Options{}, down("a", 503), down("b", 502), serving("c"), serving("d"))
		seen := map[string]bool{}
		for range 10 {
			a := p.chat("claude", false)
			if a.status != 200 || a.header.Get("X-Loopctl-Model") != "c/m" {
				t.Fatalf("%d %s by %q, want c/m", a.status, a.body, a.header.Get("X-Loopctl-Model"))
			}
			seen[a.header.Get("X-Loopctl-Attempts")] = true
		}
		if !seen["2"] && !seen["3"] {
			t.Errorf("x-loopctl-attempts took %v: a request that met a failing member counts it", seen)
		}
		if p.count("a") > 2 || p.count("b") > 2 {
			t.Errorf("a got %d, b %d requests: a member is tried once per request and trips at 2", p.count("a"), p.count("b"))
		}
	})
}

func TestPoolAllMembersDownTheChainServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPoolGW(t, threePool("none"), Options{}, down("a", 500), down("b", 500), down("c", 500), serving("d"))
		a := p.chat("claude", false)
		if a.status != 200 || !strings.Contains(a.body, "from d") {
			t.Fatalf("%d %s, want the chain's backup to serve", a.status, a.body)
		}
		if got := a.header.Get("X-Loopctl-Model"); got != "d/backup" {
			t.Errorf("x-loopctl-model %q, want d/backup", got)
		}
		if got := a.header.Get("X-Loopctl-Attempts"); got != "4" {
			t.Errorf("x-loopctl-attempts %q, want 4 (three members, then the backup)", got)
		}
		for _, m := range []string{"a", "b", "c"} {
			if got := p.count(m); got != 1 {
				t.Errorf("%s received %d requests, want 1: no request reaches one member twice", m, got)
			}
		}
		if s := managers(p.gw)["claude"].Snapshot(); s.ConsecutiveFailures != 1 {
			t.Errorf("the model breaker counted %d failures, want 1: the pool attempt's one verdict", s.ConsecutiveFailures)
		}
	})
}

func TestPoolMemberRateLimitOpensOnlyIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := deployment{name: "a", script: llmtest.Sequence(llmtest.RateLimit("7"), llmtest.Text("from a"))}
		p := newPoolGW(t, threePool("none"), Options{}, a, serving("b"), serving("c"), serving("d"))
		start := time.Now()
		for p.count("a") == 0 {
			if ans := p.chat("claude", false); ans.status != 200 {
				t.Fatalf("%d %s: a member's 429 reached the client", ans.status, ans.body)
			}
		}
		s := p.gw.memberBreaker("a/m").Snapshot()
		if s.State != breaker.Open || !s.OpenUntil.Equal(start.Add(7*time.Second)) || s.Cause != breaker.CauseHint {
			t.Fatalf("a after its 429: %v until %v (%v), want open until the hint, %v", s.State, s.OpenUntil, s.Cause, start.Add(7*time.Second))
		}
		for _, m := range []string{"b/m", "c/m"} {
			if st := p.gw.memberBreaker(m).State(); st != breaker.Closed {
				t.Errorf("%s is %v: only the rate-limited member opens", m, st)
			}
		}
		if ms := managers(p.gw)["claude"].Snapshot(); ms.ConsecutiveFailures != 0 {
			t.Errorf("the model breaker counted %d failures for a member's rate limit", ms.ConsecutiveFailures)
		}
		for range 20 {
			p.chat("claude", false)
		}
		if got := p.count("a"); got != 1 {
			t.Errorf("a received %d requests before its hint, want 1", got)
		}
		time.Sleep(7 * time.Second)
		if ans := p.chat("claude", false); ans.header.Get("X-Loopctl-Model") != "a/m" {
			t.Errorf("after the hint the request went to %q, want a/m (its probe is due, so it is chosen first)", ans.header.Get("X-Loopctl-Model"))
		}
	})
}
