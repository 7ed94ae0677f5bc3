package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestRegistrySharedThroughBackend: two processes each build a
// health.Registry and a Router exactly as in-process code does, except for
// Settings.Backend; failures on both trip the tool for both, both route to
// the backup, and one probe is granted for the fleet.
func TestRegistrySharedThroughBackend(t *testing.T) {
	srv := redistest.Start(t)
	var regs []*health.Registry
	var routers []*health.Router
	for range 2 {
		s := startStore(t, srv, Options{})
		r, err := health.NewRegistry(breaker.Settings{FailureThreshold: 2, RecoveryDuration: 300 * time.Millisecond,
			ProbeTimeout: time.Second, Backend: s.ToolBackend()})
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, r)
		routers = append(routers, health.NewRouter(r, map[string][]string{"search": {"search-backup"}}))
	}
	for _, r := range regs {
		p, err := r.Allow("search")
		if err != nil {
			t.Fatal(err)
		}
		p.Failure()
	}
	for i, r := range regs {
		eventually(t, time.Second, "open on every process", func() bool { return r.Breaker("search").State() == breaker.Open })
		if _, err := r.Allow("search"); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("p%d: Allow on the tripped tool = %v", i, err)
		}
		if got, err := routers[i].Resolve("search"); err != nil || got != "search-backup" {
			t.Fatalf("p%d: Resolve = %q, %v; want the backup", i, got, err)
		}
		if st := r.Stats("search"); st.Failures != 1 {
			t.Fatalf("p%d: local statistics %+v, want this process's one failure", i, st)
		}
	}
	eventually(t, time.Second, "cooldown", regs[0].Breaker("search").WouldAllow)
	eventually(t, time.Second, "cooldown", regs[1].Breaker("search").WouldAllow)
	// breaker.Do through the shared breaker: the probe runs under its lease,
	// and while it is in flight the other process is refused
	_, err := breaker.Do(context.Background(), regs[0].Breaker("search"), func(ctx context.Context) (int, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the probe's call has no deadline")
		}
		eventually(t, time.Second, "the probe is seen", func() bool { return regs[1].Breaker("search").State() == breaker.HalfOpen })
		if _, err := regs[1].Allow("search"); !errors.Is(err, breaker.ErrOpen) {
			t.Errorf("a second probe for the fleet: %v", err)
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		eventually(t, time.Second, "closed by the probe", func() bool { return r.Breaker("search").State() == breaker.Closed })
	}
}
