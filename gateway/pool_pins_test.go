package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/pool"
)

// sickable is a deployment that answers text, or 500 while *sick.
func sickable(name string, sick *bool) deployment {
	return deployment{name: name, script: func(llmtest.Request) llmtest.Reply {
		if *sick {
			return llmtest.Error(500)
		}
		return llmtest.Text("from " + name)
	}}
}

func TestPoolPinnedResponsesGoToTheMemberThatMadeThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sick := map[string]*bool{"a": new(bool), "b": new(bool), "c": new(bool)}
		p := newPoolGW(t, threePool("none"), Options{}, sickable("a", sick["a"]), sickable("b", sick["b"]), sickable("c", sick["c"]), serving("d"))
		first := p.do(context.Background(), "/v1/responses", `{"model":"claude","input":"hi"}`)
		var r struct{ ID string }
		if err := json.Unmarshal([]byte(first.body), &r); err != nil || first.status != 200 || r.ID == "" {
			t.Fatalf("first response: %d %s", first.status, first.body)
		}
		maker := first.header.Get("X-Loopctl-Model")
		next := `{"model":"claude","previous_response_id":"` + r.ID + `","input":"more"}`
		for i := range 10 {
			a := p.do(context.Background(), "/v1/responses", next)
			if a.status != 200 || a.header.Get("X-Loopctl-Model") != maker {
				t.Fatalf("follow-up %d: %d by %q, want the member that made the response, %s", i, a.status, a.header.Get("X-Loopctl-Model"), maker)
			}
		}
		up := maker[:1]
		*sick[up] = true
		before := p.count(up)
		a := p.do(context.Background(), "/v1/responses", next)
		if a.status != 502 || a.header.Get("X-Loopctl-Model") != maker || p.count(up) != before+1 {
			t.Fatalf("with its member failing: %d by %q (%d requests to it), want 502 from %s, never failed over", a.status, a.header.Get("X-Loopctl-Model"), p.count(up)-before, maker)
		}
		p.do(context.Background(), "/v1/responses", next) // trip_threshold 2
		if st := p.gw.memberBreaker(maker).State(); st != breaker.Open {
			t.Fatalf("%s is %v after two failed pinned requests, want open: they count on its member breaker", maker, st)
		}
		before = p.count(up)
		a = p.do(context.Background(), "/v1/responses", next)
		if a.status != 503 || a.header.Get("Retry-After") == "" || p.count(up) != before {
			t.Errorf("with its member open: %d, Retry-After %q, %d requests sent; want 503 with Retry-After and none sent", a.status, a.header.Get("Retry-After"), p.count(up)-before)
		}
	})
}

func TestPoolCountTokensGoesToPeeksMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{
			Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}, {Target: "c/m"}}}},
			Models: []Model{{Name: "claude", Primary: "pool/p"}},
		}
		an := func(name string) deployment {
			return deployment{name: name, anthropic: true, script: llmtest.Always(llmtest.Text("x"))}
		}
		p := newPoolGW(t, cfg, Options{}, an("a"), an("b"), an("c"))
		pd := p.gw.poolNamed("p")
		body := `{"model":"claude","messages":[{"role":"user","content":"hi"}]}`
		for s := range 12 {
			key := fmt.Sprintf("s%d", s)
			home := pd.member(pd.p.Home(pool.SessionOf(key)))
			ans := p.do(context.Background(), "/v1/messages/count_tokens", body, "X-Loopctl-Session", key)
			if ans.status != 200 || ans.header.Get("X-Loopctl-Model") != home.ref {
				t.Fatalf("session %s: %d by %q, want its home %s (the member rule 3 chooses)", key, ans.status, ans.header.Get("X-Loopctl-Model"), home.ref)
			}
		}
		for i := range pd.members {
			st := pd.p.Status(time.Now(), i)
			if st.InFlight != 0 || st.LastMinute != 0 || st.Breaker.ConsecutiveFailures != 0 {
				t.Errorf("member %d after count_tokens: %+v; want no slot, no attempt, no verdict", i, st)
			}
		}
		if n := p.count("a") + p.count("b") + p.count("c"); n != 12 {
			t.Errorf("%d count_tokens requests reached the members, want 12", n)
		}
	})
}

func TestPoolCountTokensOnOpenAIMembersIsEstimated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPoolGW(t, threePool(""), Options{}, serving("a"), serving("b"), serving("c"), serving("d"))
		ans := p.do(context.Background(), "/v1/messages/count_tokens", `{"model":"claude","messages":[{"role":"user","content":"hi"}]}`)
		if ans.status != 200 || ans.header.Get("X-Loopctl-Estimate") != "true" {
			t.Fatalf("%d %s (estimate %q), want the local estimate", ans.status, ans.body, ans.header.Get("X-Loopctl-Estimate"))
		}
		if n := p.count("a") + p.count("b") + p.count("c"); n != 0 {
			t.Errorf("%d requests reached openai members for count_tokens", n)
		}
	})
}
