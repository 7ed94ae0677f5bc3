package fleet

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestManagerSharedThroughBackend: three processes each build a
// fallback.Manager exactly as in-process code does, except for
// Settings.Backend. Failed turns on different processes trip the fleet's one
// breaker, every process routes to the backup, and after the cooldown one
// probe turn is granted for the whole fleet; its successes recover everyone.
func TestManagerSharedThroughBackend(t *testing.T) {
	srv := redistest.Start(t)
	var ms []*fallback.Manager
	var transitions sync.Map
	for i := range 3 {
		s := startStore(t, srv, Options{})
		m, err := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, TripThreshold: 3,
			RecoveryTimeout: 300 * time.Millisecond, RecoverySuccessesNeeded: 1, ProbeTimeout: time.Second,
			OnTransition: func(tr fallback.Transition) { transitions.Store(i, tr) },
			Backend:      s.ModelBackend("chat")})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		tk, err := m.Begin()
		if err != nil || tk.Model() != "gpt-a" {
			t.Fatalf("Begin = %q, %v", tk.Model(), err)
		}
		tk.Failure(fallback.Transient)
		tk.Failure(fallback.Transient) // a second settlement is ignored, as in process
	}
	for i, m := range ms {
		eventually(t, time.Second, "fallback everywhere", func() bool { return m.State() == fallback.Fallback })
		if tk, _ := m.Begin(); tk.Model() != "gpt-b" || tk.IsProbe() {
			t.Fatalf("p%d routes to %q (probe %v), want gpt-b", i, tk.Model(), tk.IsProbe())
		}
		if !m.FallbackActivated() || m.ActiveModel() != "gpt-b" {
			t.Fatalf("p%d: activated %v, active %q", i, m.FallbackActivated(), m.ActiveModel())
		}
		eventually(t, time.Second, "the transition callback", func() bool { _, ok := transitions.Load(i); return ok })
	}
	for _, m := range ms {
		eventually(t, time.Second, "cooldown", func() bool { return m.ActiveModel() == "gpt-a" })
	}
	var probes []fallback.Ticket
	for _, m := range ms {
		for range 3 {
			tk, err := m.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if tk.IsProbe() {
				if _, ok := tk.Deadline(); !ok || tk.Model() != "gpt-a" {
					t.Fatalf("probe %q without a deadline", tk.Model())
				}
				probes = append(probes, tk)
			} else if tk.Model() != "gpt-b" {
				t.Fatalf("a turn during the probe went to %q", tk.Model())
			}
		}
	}
	if len(probes) != 1 {
		t.Fatalf("%d probe turns for the fleet, want 1", len(probes))
	}
	probes[0].Success()
	for _, m := range ms {
		eventually(t, time.Second, "recovered everywhere", func() bool { return m.State() == fallback.Primary })
	}
	if err := ms[0].SetAvailable("gpt-x", false); !errors.Is(err, fallback.ErrNotInChain) {
		t.Fatalf("SetAvailable(unknown) = %v", err)
	}
	if err := ms[0].SetAvailable("gpt-b", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "the disable reaches p2", func() bool {
		s := ms[2].Snapshot()
		return len(s.Chain) == 1 && !s.Chain[0].Available
	})
}

// TestModelBackendRelease: a breaker attached through ModelBackend is
// forgotten by the Store once every Manager attached under its name is
// released (the gateway's evicted direct names), its state stays in the
// store for a later Attach, and one made by Store.Model is never forgotten.
func TestModelBackendRelease(t *testing.T) {
	srv := redistest.Start(t)
	s := startStore(t, srv, Options{})
	members := func() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.members) }
	set := fallback.Settings{Primary: "a", TripThreshold: 1, RecoveryTimeout: time.Hour}
	b := s.ModelBackend("direct")
	var ms []*fallback.Manager
	for range 2 {
		set.Backend = b
		m, err := fallback.New(set)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	tk, _ := ms[0].Begin()
	tk.Failure(fallback.Transient)
	if members() != 1 {
		t.Fatalf("%d members, want 1", members())
	}
	rel := b.(interface{ Release() })
	rel.Release()
	if members() != 1 {
		t.Fatal("forgotten while a Manager is still attached")
	}
	rel.Release()
	if members() != 0 {
		t.Fatalf("%d members after every Manager was released, want 0", members())
	}
	rel.Release() // one too many: nothing
	set.Backend = b
	again, err := fallback.New(set)
	if err != nil {
		t.Fatal(err)
	}
	if again.State() != fallback.Fallback || members() != 1 {
		t.Fatalf("attached again: %v (%d members), want the stored trip", again.State(), members())
	}
	kept, err := s.Model("kept", set)
	if err != nil {
		t.Fatal(err)
	}
	_ = kept
	s.ModelBackend("kept").(interface{ Release() }).Release()
	if members() != 2 {
		t.Fatalf("a Store.Model breaker was forgotten: %d members", members())
	}
}
