package gateway

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/pool"
)

func TestPoolSessionStaysHome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPoolGW(t, threePool(""), Options{}, serving("a"), serving("b"), serving("c"), serving("d"))
		pd := p.gw.poolNamed("p")
		homes := map[string]int{}
		for s := range 30 {
			key := fmt.Sprintf("session-%d", s)
			want := pd.member(pd.p.Home(pool.SessionOf(key))).ref
			homes[want]++
			for i := range 8 {
				a := p.chat("claude", i%3 == 0, "X-Loopctl-Session", key)
				if got := a.header.Get("X-Loopctl-Model"); a.status != 200 || got != want {
					t.Fatalf("session %s request %d: %d by %q, want its home %s", key, i, a.status, got, want)
				}
			}
		}
		if len(homes) != 3 {
			t.Errorf("30 sessions homed on %v: every member should be home to some", homes)
		}
		for _, m := range []string{"a", "b", "c"} {
			for _, r := range p.ups[m].Requests() {
				if r.Header.Get("X-Loopctl-Session") != "" {
					t.Fatalf("%s received the session header: it stays at the gateway", m)
				}
			}
		}
	})
}

func TestPoolSessionLeavesAFailingHomeAndReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sick bool
		a := deployment{name: "a", script: func(r llmtest.Request) llmtest.Reply {
			if sick {
				return llmtest.Error(500)
			}
			return llmtest.Text("from a")
		}}
		cfg := threePool("")
		cfg.Pools[0].Breaker.RecoveryTimeout = 5 * time.Second
		p := newPoolGW(t, cfg, Options{}, a, serving("b"), serving("c"), serving("d"))
		pd := p.gw.poolNamed("p")
		key := ""
		for s := 0; key == ""; s++ {
			if k := fmt.Sprintf("s%d", s); pd.p.Home(pool.SessionOf(k)) == 0 {
				key = k // a session homed on a/m
			}
		}
		sick = true
		for range 3 {
			if ans := p.chat("claude", false, "X-Loopctl-Session", key); ans.status != 200 || ans.header.Get("X-Loopctl-Model") == "a/m" {
				t.Fatalf("%d by %q while its home fails: want another member, invisibly", ans.status, ans.header.Get("X-Loopctl-Model"))
			}
		}
		if got := p.count("a"); got != 1 {
			t.Fatalf("a/m received %d of its session's 3 requests while failing, want 1 (its failure's penalty keeps it off)", got)
		}
		if s := p.gw.memberBreaker("a/m").Snapshot(); s.ConsecutiveFailures != 1 {
			t.Fatalf("a/m's breaker counted %d failures, want 1", s.ConsecutiveFailures)
		}
		sick = false
		time.Sleep(11 * time.Second) // past τ = 10 s: a/m forgets its penalty
		for i := range 5 {
			if got := p.chat("claude", false, "X-Loopctl-Session", key).header.Get("X-Loopctl-Model"); got != "a/m" {
				t.Errorf("request %d after a recovered went to %q, want the session's home a/m", i, got)
			}
		}
	})
}

func TestPoolHeadroomKeepsRequestsOffALimitedMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := &llmtest.Limits{Requests: 2, Window: time.Minute}
		a := deployment{name: "a", script: lim.Script(llmtest.Always(llmtest.Text("from a")))}
		p := newPoolGW(t, threePool("none"), Options{}, a, serving("b"), serving("c"), serving("d"))
		for i := range 40 {
			if ans := p.chat("claude", false); ans.status != 200 {
				t.Fatalf("request %d: %d %s", i, ans.status, ans.body)
			}
		}
		if got := p.count("a"); got != 2 {
			t.Errorf("a received %d requests in its window of 2: its headers say when it is out", got)
		}
		if s := p.gw.memberBreaker("a/m").Snapshot(); s.State != breaker.Closed || s.ConsecutiveFailures != 0 {
			t.Errorf("a's breaker is %v with %d failures: it should never have answered 429", s.State, s.ConsecutiveFailures)
		}
		time.Sleep(time.Minute) // its window resets
		for range 40 {
			p.chat("claude", false)
		}
		if got := p.count("a"); got != 4 {
			t.Errorf("a received %d requests over two windows, want 4", got)
		}
	})
}
