package gateway

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestSlowProbeReopens (SEMANTICS §9.2): with breaker.slow_call_after set
// (slow_call_rate not needed), a probe whose first content comes later
// than it re-opens the breaker at once, the trip count rising and the
// cooldown growing with recovery_backoff, whatever the streak of probe
// successes; the request is still served by the primary (no fall-through).
// A streamed probe is settled at its first content.
func TestSlowProbeReopens(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole answer", true: "stream"}[stream], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				a := func(llmtest.Request) llmtest.Reply {
					if calls.Add(1) == 1 {
						return llmtest.Error(500)
					}
					gate := make(chan struct{})
					time.AfterFunc(2*time.Second, func() { close(gate) })
					return llmtest.Reply{Text: "from a", Gate: gate}
				}
				cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"},
					Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: 10 * time.Second, RecoveryBackoff: 2, SlowCallAfter: time.Second}}},
					Retry: Retry{MaxRetries: -1}}
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{
					"a": a, "b": llmtest.Always(llmtest.Text("from b"))}), cfg, Options{})
				if r := b.post(chatBody("smart", stream)); r.status != 200 || !strings.Contains(r.body, "from b") {
					t.Fatalf("the trip's request: %d %s", r.status, r.body)
				}
				time.Sleep(10 * time.Second)
				if r := b.post(chatBody("smart", stream)); r.status != 200 || !strings.Contains(r.body, "from a") {
					t.Fatalf("the slow probe's request: %d %s, want served by the primary", r.status, r.body)
				}
				s := managers(b.gw)["smart"].Snapshot()
				if s.State != fallback.Fallback || s.Trips != 2 || s.CooldownCause != fallback.CauseBackoff ||
					s.CooldownEnds.Sub(s.TrippedAt) != 20*time.Second {
					t.Fatalf("after the slow probe: %+v", s)
				}
				if calls.Load() != 2 {
					t.Errorf("the primary saw %d calls, want 2 (no next attempt)", calls.Load())
				}
			})
		})
	}
}
