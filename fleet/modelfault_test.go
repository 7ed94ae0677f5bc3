package fleet

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestModelStoreKilled: a tripped shared model breaker whose store is
// SIGKILLed goes local in every process, seeded in Fallback with the same
// trip time (turns keep going to the backup until the same cooldown end);
// each process then probes the primary on its own, at most once at a time;
// when the store restarts empty every process reads Primary again.
func TestModelStoreKilled(t *testing.T) {
	srv := redistest.Start(t)
	const cooldown = 400 * time.Millisecond
	set := fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1, RecoveryTimeout: cooldown,
		RecoverySuccessesNeeded: 1, ProbeTimeout: 5 * time.Second}
	var ms []*ModelBreaker
	for range 2 {
		s, err := New(Options{Client: newClient(t, srv.Addr()), Prefix: "mk", StoreTimeout: faultTimeout, RetryInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		m, err := s.Model("chat", set)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	tk, _ := ms[0].Begin()
	tk.Failure(fallback.Transient)
	for _, m := range ms {
		eventually(t, time.Second, "fallback everywhere", func() bool { return m.State() == fallback.Fallback })
	}
	tripped := ms[1].Snapshot().TrippedAt
	srv.Kill()
	for i, m := range ms {
		eventually(t, 2*time.Second, "local mode", func() bool { return m.Mode() == LocalMode })
		s := m.Snapshot()
		if s.State != fallback.Fallback || s.TrippedAt.Sub(tripped).Abs() > 20*time.Millisecond {
			t.Fatalf("p%d seeded %v tripped at %v, want fallback tripped at %v", i, s.State, s.TrippedAt, tripped)
		}
		if time.Since(tripped) < cooldown {
			if tk, err := m.Begin(); err != nil || tk.Model() != "b" {
				t.Fatalf("p%d before the cooldown's end: %q, %v", i, tk.Model(), err)
			}
		}
	}
	for i, m := range ms {
		eventually(t, 2*cooldown, "cooldown", func() bool { return m.ActiveModel() == "a" })
		probe, err := m.Begin()
		if err != nil || !probe.IsProbe() || probe.Model() != "a" {
			t.Fatalf("p%d: first turn after the cooldown %q probe %v, %v", i, probe.Model(), probe.IsProbe(), err)
		}
		if other, _ := m.Begin(); other.IsProbe() || other.Model() != "b" {
			t.Fatalf("p%d: a second probe while one is in flight: %q", i, other.Model())
		}
		probe.Failure(fallback.Transient)
	}
	srv.Restart(false)
	for _, m := range ms {
		eventually(t, 3*time.Second, "shared and primary again", func() bool {
			return m.Mode() == Shared && m.State() == fallback.Primary
		})
	}
}
