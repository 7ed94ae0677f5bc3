package gateway

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// mixedPool is pool "p" of an openai member a/m and an anthropic member
// x/m, and model "claude" on it alone.
func mixedPool() Config {
	return Config{
		Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "x/m"}}, Affinity: "none"}},
		Models: []Model{{Name: "claude", Primary: "pool/p"}},
	}
}

func TestPoolTranslatesPerMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := deployment{name: "x", anthropic: true, script: llmtest.Always(llmtest.Text("from x"))}
		p := newPoolGW(t, mixedPool(), Options{}, serving("a"), x)
		served := map[string]bool{}
		for i := range 40 {
			for _, stream := range []bool{false, true} {
				a := p.chat("claude", stream)
				m := a.header.Get("X-Loopctl-Model")
				if a.status != 200 || !strings.Contains(a.body, "from "+m[:1]) {
					t.Fatalf("request %d: %d %s by %q", i, a.status, a.body, m)
				}
				if tr := a.header.Get("X-Loopctl-Translated"); (m == "x/m") != (tr == "chat->messages") {
					t.Errorf("served by %s, x-loopctl-translated %q: only the anthropic member's answer is translated", m, tr)
				}
				served[m] = true
			}
		}
		if !served["a/m"] || !served["x/m"] {
			t.Errorf("members that served: %v, want both", served)
		}
		for _, r := range p.ups["x"].Requests() {
			if r.Endpoint != "messages" || r.Header.Get("X-Api-Key") != "sk-x" {
				t.Fatalf("x received %s with x-api-key %q, want messages with its own key", r.Endpoint, r.Header.Get("X-Api-Key"))
			}
		}
	})
}

func TestPoolEmbeddingsOnlyOnOpenAIMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := deployment{name: "x", anthropic: true, script: llmtest.Always(llmtest.Text("from x"))}
		p := newPoolGW(t, mixedPool(), Options{}, serving("a"), x)
		for range 10 {
			a := p.do(context.Background(), "/v1/embeddings", `{"model":"claude","input":"hi"}`)
			if a.status != 200 || a.header.Get("X-Loopctl-Model") != "a/m" {
				t.Fatalf("embeddings: %d %s by %q, want a/m", a.status, a.body, a.header.Get("X-Loopctl-Model"))
			}
		}
		if n := len(p.ups["x"].Requests()); n != 0 {
			t.Errorf("the anthropic member received %d embeddings requests", n)
		}
	})
}

func TestPoolStreamBrokenAfterContentFailsTheMemberAndThePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := threePool("none")
		broken := llmtest.Always(llmtest.Streamed(llmtest.StreamCut, 2, "one ", "two ", "three"))
		p := newPoolGW(t, cfg, Options{}, deployment{name: "a", script: broken},
			deployment{name: "b", script: broken}, deployment{name: "c", script: broken}, serving("d"))
		a := p.chat("claude", true)
		if a.status != 200 || !strings.Contains(a.body, "one") || strings.Contains(a.body, "[DONE]") {
			t.Fatalf("%d %s: want the stream's content, then its break (no [DONE])", a.status, a.body)
		}
		m := a.header.Get("X-Loopctl-Model")
		if s := p.gw.memberBreaker(m).Snapshot(); s.ConsecutiveFailures != 1 {
			t.Errorf("%s counted %d failures, want 1: a stream broken after content fails its member", m, s.ConsecutiveFailures)
		}
		if s := managers(p.gw)["claude"].Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 1 {
			t.Errorf("the model breaker is %v/%d, want one failure: after content, §4's rules", s.State, s.ConsecutiveFailures)
		}
		if n := p.count("a") + p.count("b") + p.count("c") + p.count("d"); n != 1 {
			t.Errorf("%d upstream requests, want 1: nothing fails over after content", n)
		}
	})
}

func TestPoolClientGoneCountsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		hang := llmtest.Always(llmtest.Reply{Text: "late", Gate: gate})
		p := newPoolGW(t, threePool("none"), Options{}, deployment{name: "a", script: hang},
			deployment{name: "b", script: hang}, deployment{name: "c", script: hang}, serving("d"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan answer)
		go func() { done <- p.do(ctx, "/v1/chat/completions", chatBody("claude", false)) }()
		synctest.Wait()
		cancel()
		<-done
		close(gate)
		for _, m := range []string{"a/m", "b/m", "c/m"} {
			if s := p.gw.memberBreaker(m).Snapshot(); s.State != breaker.Closed || s.ConsecutiveFailures != 0 {
				t.Errorf("%s is %v/%d after the client left, want no verdict", m, s.State, s.ConsecutiveFailures)
			}
		}
		if s := managers(p.gw)["claude"].Snapshot(); s.ConsecutiveFailures != 0 {
			t.Errorf("the model breaker counted %d failures for a client that left", s.ConsecutiveFailures)
		}
		if n := p.count("a") + p.count("b") + p.count("c"); n != 1 {
			t.Errorf("%d member requests for one client that left, want 1", n)
		}
		for i := range p.gw.poolNamed("p").members {
			if st := p.gw.poolNamed("p").p.Status(time.Now(), i); st.InFlight != 0 {
				t.Errorf("member %d has %d in flight after the client left", i, st.InFlight)
			}
		}
	})
}
