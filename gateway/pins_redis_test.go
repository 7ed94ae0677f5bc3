package gateway

import (
	"strings"
	"testing"
	"time"

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
