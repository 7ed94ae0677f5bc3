package gateway

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// TestPoolLastMemberLadder: the ladder makes no same-model retry on a
// member, except on the last admitted member when no other model is
// usable (SEMANTICS §9.3 rule 6, §7.1): then its transient retries and
// rate-limit waits run, spending the pool entry's retry budget (§8.3).
// Each member answers first, then serves: the member tried first fails
// once and is left; the last one is retried, or not.
func TestPoolLastMemberLadder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  llmtest.Reply // each member's first answer
		chain  bool          // the model has a serving chain entry c/m
		retry  Retry
		status int
		served string // whose answer the client gets
		counts []int  // requests to a and b, sorted
		waited time.Duration
	}{
		{name: "500 then 200 on the last member: served after one retry on it", first: llmtest.Error(500),
			status: 200, served: "from a|from b", counts: []int{1, 2}},
		{name: "429 with Retry-After 1 on the last member: waited and served", first: llmtest.RateLimit("1"),
			status: 200, served: "from a|from b", counts: []int{1, 2}, waited: time.Second},
		{name: "a usable chain entry: no retry, the chain serves", first: llmtest.Error(500), chain: true,
			status: 200, served: "from c", counts: []int{1, 1}},
		{name: "the retry budget refuses: no retry", first: llmtest.Error(500), retry: Retry{Budget: RetryBudgetNone},
			status: 502, counts: []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				model := Model{Name: "solo", Primary: "pool/p", Breaker: Breaker{TripThreshold: 5}}
				deps := []deployment{
					{name: "a", script: llmtest.Sequence(tc.first, llmtest.Text("from a"))},
					{name: "b", script: llmtest.Sequence(tc.first, llmtest.Text("from b"))},
				}
				if tc.chain {
					model.Chain = []string{"c/m"}
					deps = append(deps, serving("c"))
				}
				cfg := Config{
					Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}}}},
					Models: []Model{model},
					Retry:  tc.retry,
				}
				p := newPoolGW(t, cfg, Options{}, deps...)
				start := time.Now()
				ans := p.chat("solo", false)
				if ans.status != tc.status {
					t.Fatalf("%d %s, want %d", ans.status, ans.body, tc.status)
				}
				if tc.served != "" && !containsAny(ans.body, strings.Split(tc.served, "|")) {
					t.Errorf("answer %s, want %s's", ans.body, tc.served)
				}
				counts := []int{p.count("a"), p.count("b")}
				slices.Sort(counts)
				if !slices.Equal(counts, tc.counts) {
					t.Errorf("member requests %v, want %v", counts, tc.counts)
				}
				if got := time.Since(start); got < tc.waited || tc.waited == 0 && got >= time.Second {
					t.Errorf("the request took %v, want a wait of %v", got, tc.waited)
				}
			})
		})
	}
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
