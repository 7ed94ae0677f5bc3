package gateway

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/internal/redistest"
	"github.com/loopctl/loopctl-go/llmtest"
)

// Two gateways sharing a real Redis: a response relayed by one pins the
// follow-up sent to the other.
func TestResponsesPinnedAcrossTheFleet(t *testing.T) {
	srv := redistest.Start(t)
	var gws []*wfix
	for range 2 {
		st, err := fleet.Dial("redis://"+srv.Addr(), fleet.Options{Prefix: "gw"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		select {
		case <-st.Ready():
		case <-time.After(5 * time.Second):
			t.Fatal("store not ready")
		}
		gws = append(gws, newWires(t, map[string]llmtest.Script{"a": ok, "b": ok}, Options{Responses: st.ResponsePins()}))
	}
	first := gws[0].do("/v1/responses", rsBody("up/b", false, ""))
	if first.status != 200 {
		t.Fatal(first.status, first.body)
	}
	id := "resp_" + strings.Split(strings.SplitN(first.body, `"id":"resp_`, 2)[1], `"`)[0]
	a := gws[1].do("/v1/responses", rsBody("smart", true, `,"previous_response_id":"`+id+`"`))
	if a.status != 200 || a.header.Get("X-Loopctl-Model") != "up/b" || gws[1].oa.Count("a") != 0 {
		t.Fatalf("%d %s a=%d", a.status, a.header.Get("X-Loopctl-Model"), gws[1].oa.Count("a"))
	}
}

// releasing counts the Release calls on a fleet backend.
type releasing struct {
	fallback.Backend
	n *atomic.Int32
}

func (r releasing) Release() {
	r.n.Add(1)
	r.Backend.(interface{ Release() }).Release()
}

// An evicted direct name releases its fleet breaker: the Store does not
// keep a breaker for every name a client ever sent.
func TestDirectEvictionReleasesTheFleetBreaker(t *testing.T) {
	srv := redistest.Start(t)
	st, err := fleet.Dial("redis://"+srv.Addr(), fleet.Options{Prefix: "gw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	var n atomic.Int32
	cfg := Config{Models: []Model{{Name: "m", Primary: "up/a"}}, Limits: Limits{MaxDirect: 2}}
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), cfg,
		Options{Backend: func(name string) fallback.Backend { return releasing{st.ModelBackend(name), &n} }})
	for i := range 10 {
		if a := f.post(chatBody(fmt.Sprintf("up/r%d", i), false)); a.status != 200 {
			t.Fatalf("name %d: %d %s", i, a.status, a.body)
		}
	}
	if got := n.Load(); got != 8 {
		t.Errorf("%d releases after 10 direct names with max_direct 2, want 8", got)
	}
}
