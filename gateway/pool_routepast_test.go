package gateway

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// probeTaker is a recorder that, when an attempt on target starts, begins
// a turn of the model breaker m as a concurrent request would, and keeps
// what it got.
type probeTaker struct {
	*recorder
	target string
	m      func() *fallback.Manager
	got    []string
}

func (o *probeTaker) StartAttempt(ctx context.Context, a AttemptStart) context.Context {
	if a.Target == o.target {
		tk, err := o.m().Begin()
		o.got = append(o.got, tk.Model()+" probe="+map[bool]string{true: "yes", false: "no"}[tk.IsProbe()])
		if err == nil {
			tk.Cancel()
		}
	}
	return o.recorder.StartAttempt(ctx, a)
}

// TestPoolRoutedPastKeepsTheProbe: a model whose cooldown is over, whose
// primary is a pool with every member open, routes the request to its
// chain entry without drawing a ticket for the pool (SEMANTICS §9.3 rule
// 6): the probe stays free for a concurrent request, and the observer and
// the breaker see no skipped ticket.
func TestPoolRoutedPastKeepsTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{
			Pools: []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}},
				Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: time.Hour}}},
			Models: []Model{{Name: "solo", Primary: "pool/p", Chain: []string{"c/m"}, Breaker: Breaker{TripThreshold: 5}}},
		}
		var p *poolGW
		obs := &probeTaker{recorder: &recorder{t: t}, target: "c/m", m: func() *fallback.Manager { return managers(p.gw)["solo"] }}
		p = newPoolGW(t, cfg, Options{Observer: obs}, down("a", 500), down("b", 500), serving("c"))
		if ans := p.chat("solo", false); ans.status != 200 { // trips both members (for an hour); c serves
			t.Fatalf("first request: %d %s", ans.status, ans.body)
		}
		// The model's own cooldown (an operator's hold, ended) is over: its
		// probe is due while every member of its primary is open.
		m := managers(p.gw)["solo"]
		m.Hold(time.Now().Add(time.Minute), "test")
		m.Release()
		if s := m.Snapshot(); s.State != fallback.Fallback || m.ActiveModel() != "pool/p" {
			t.Fatalf("the model is %v routing to %q, want fallback with the probe due", s.State, m.ActiveModel())
		}
		obs.got, obs.recorder.lines = nil, nil
		sent := p.count("a") + p.count("b")
		ans := p.chat("solo", false)
		if ans.status != 200 || !strings.Contains(ans.body, "from c") {
			t.Fatalf("second request: %d %s, want c's answer", ans.status, ans.body)
		}
		if got := ans.header.Get("X-Loopctl-Skipped"); got != "pool/p=unavailable" {
			t.Errorf("x-loopctl-skipped %q, want pool/p=unavailable", got)
		}
		if got := p.count("a") + p.count("b"); got != sent {
			t.Errorf("%d member requests were sent", got-sent)
		}
		if len(obs.got) != 1 || obs.got[0] != "pool/p probe=yes" {
			t.Errorf("a concurrent turn during c's attempt got %v, want the probe on pool/p", obs.got)
		}
		lines := obs.String()
		if strings.Contains(lines, " pool/p upstream=") || strings.Contains(lines, " skip ") {
			t.Errorf("the observer saw the pool's ticket:\n%s", lines)
		}
		if s := m.Snapshot(); !s.ProbeStartedAt.IsZero() || s.State == fallback.Primary {
			t.Errorf("after the request the breaker is %v, probe started %v: want the probe free", s.State, s.ProbeStartedAt)
		}
	})
}

// TestPoolOnlyRoutedPastDrawsNoProbe: a model whose only entry is a pool
// with every member open, its probe due, answers §4's pool row without
// drawing a ticket: its breaker sees no turn at all (it stays in Fallback,
// the cooldown step to Recovering not taken), and the probe is left to the
// next request that may use it.
func TestPoolOnlyRoutedPastDrawsNoProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{
			Pools: []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}},
				Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: time.Hour}}},
			Models: []Model{{Name: "solo", Primary: "pool/p", Breaker: Breaker{TripThreshold: 5}}},
		}
		p := newPoolGW(t, cfg, Options{}, down("a", 500), down("b", 500))
		p.chat("solo", false) // trips both members for an hour
		m := managers(p.gw)["solo"]
		m.Hold(time.Now().Add(time.Minute), "test")
		m.Release() // the probe is due
		before := m.Snapshot()
		ans := p.chat("solo", false)
		if typ, code := errorCode(ans.body); ans.status != 503 || typ != "pool_unavailable" || code != "pool_unavailable" {
			t.Fatalf("%d %s, want 503 pool_unavailable", ans.status, ans.body)
		}
		if got := ans.header.Get("Retry-After"); got != "3600" {
			t.Errorf("Retry-After %q, want 3600 (the members' cooldown)", got)
		}
		if after := m.Snapshot(); !equalSnapshots(after, before) {
			t.Errorf("the breaker saw a turn:\n before %+v\n after  %+v", before, after)
		}
		if tk, err := m.Begin(); err != nil || !tk.IsProbe() || tk.Model() != "pool/p" {
			t.Errorf("the next turn got %q (probe %v), %v; want the probe on pool/p", tk.Model(), tk.IsProbe(), err)
		} else {
			tk.Cancel()
		}
	})
}

// equalSnapshots compares what a turn of the model breaker could change.
func equalSnapshots(a, b fallback.Snapshot) bool {
	return a.State == b.State && a.ConsecutiveFailures == b.ConsecutiveFailures && a.ProbeSuccesses == b.ProbeSuccesses &&
		a.ProbeStartedAt.Equal(b.ProbeStartedAt) && a.CooldownEnds.Equal(b.CooldownEnds) && a.TrippedAt.Equal(b.TrippedAt)
}
