package mcptool

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestProxySlowCallsTrip (SEMANTICS §8.2): the proxy reports a call's result
// as its first content, so that results coming after SlowCallAfter are slow
// successes and the slow-call rule trips the tool's breaker; fast results do
// not.
func TestProxySlowCallsTrip(t *testing.T) {
	for _, tc := range []struct {
		ms    float64
		trips bool
	}{{3000, true}, {100, false}} {
		synctest.Test(t, func(t *testing.T) {
			s := newScripted()
			h := start(t, ProxyConfig{Breaker: breaker.Settings{SlowCallAfter: time.Second, SlowCallRate: 0.5, RateMinCalls: 2}},
				map[string]*scripted{"s": s})
			for range 2 {
				if res, ci := h.call("slow", map[string]any{"ms": tc.ms}); res.IsError || ci.Outcome != OutcomeSuccess {
					t.Fatalf("slow %vms: %+v %+v", tc.ms, res, ci)
				}
			}
			if st := h.p.Registry().Breaker("s/slow").State(); (st == breaker.Open) != tc.trips {
				t.Fatalf("results after %vms: breaker %v, want tripped %v", tc.ms, st, tc.trips)
			}
		})
	}
}
