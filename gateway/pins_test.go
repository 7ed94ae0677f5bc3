package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// previous_response_id: pinned to the upstream model that produced it, on
// that model's own breaker, never failed over; an unknown id goes to the
// routed model without failover.
func TestResponsesPinning(t *testing.T) {
	healthy := true
	flaky := func(r llmtest.Request) llmtest.Reply {
		if healthy {
			return llmtest.Text("b here")
		}
		return llmtest.Error(500)
	}
	for _, stream := range []bool{false, true} {
		t.Run("stream="+boolText(stream), func(t *testing.T) {
			healthy = true
			f := newWires(t, map[string]llmtest.Script{"a": ok, "b": flaky}, Options{})
			first := f.do("/v1/responses", rsBody("up/b", stream, ""))
			id := f.oa.Requests()[0]
			if first.status != 200 {
				t.Fatal(first.status, first.body)
			}
			respID := "resp_" + strings.Split(strings.SplitN(first.body, `"id":"resp_`, 2)[1], `"`)[0]
			_ = id
			a := f.do("/v1/responses", rsBody("smart", stream, `,"previous_response_id":"`+respID+`"`))
			if a.status != 200 || a.header.Get("X-Loopctl-Model") != "up/b" || f.oa.Count("a") != 0 {
				t.Fatalf("pinned: %d %s (a %d)\n%s", a.status, a.header.Get("X-Loopctl-Model"), f.oa.Count("a"), a.body)
			}
			// b fails: no failover to a; the failures go to b's own breaker.
			healthy = false
			a = f.do("/v1/responses", rsBody("smart", false, `,"previous_response_id":"`+respID+`"`))
			if a.status != 502 || f.oa.Count("a") != 0 {
				t.Fatalf("pinned, failing: %d a=%d %s", a.status, f.oa.Count("a"), a.body)
			}
			// The failures are on up/b's own breaker (tripped), not smart's.
			if m := managers(f.gw)["up/b"]; m == nil || m.State().String() != "fallback" {
				t.Errorf("the outcome is not on up/b's breaker")
			}
			if managers(f.gw)["smart"].State().String() != "primary" {
				t.Errorf("smart's breaker moved: %s", managers(f.gw)["smart"].State())
			}
			// While up/b's breaker is open, a request pinned to it is refused
			// at once with Retry-After, and nothing is sent.
			sent := f.oa.Count("b")
			a = f.do("/v1/responses", rsBody("smart", stream, `,"previous_response_id":"`+respID+`"`))
			if a.status != 503 || a.header.Get("Retry-After") == "" || f.oa.Count("b") != sent || f.oa.Count("a") != 0 {
				t.Errorf("pinned, open: %d Retry-After %q, b %d -> %d\n%s", a.status, a.header.Get("Retry-After"), sent, f.oa.Count("b"), a.body)
			}
		})
	}
	// An unknown id: the routed model, no failover.
	f := newWires(t, map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(500)), "b": ok}, Options{})
	a := f.do("/v1/responses", rsBody("smart", false, `,"previous_response_id":"resp_unknown"`))
	if a.status != 502 || f.oa.Count("b") != 0 || f.oa.Count("a") != 1 {
		t.Errorf("unknown id: %d a=%d b=%d", a.status, f.oa.Count("a"), f.oa.Count("b"))
	}
}

// The in-process pins keep the last PinnedResponses ids.
func TestPinsRing(t *testing.T) {
	p := newPins(nil)
	for i := range PinnedResponses + 1 {
		p.remember(t.Context(), "id"+strconv.Itoa(i), "up/m")
	}
	if p.lookup(t.Context(), "id0") != "" || p.lookup(t.Context(), "id1") != "up/m" || p.lookup(t.Context(), "id"+strconv.Itoa(PinnedResponses)) != "up/m" || len(p.refs) != PinnedResponses {
		t.Errorf("ring: %d entries", len(p.refs))
	}
}
