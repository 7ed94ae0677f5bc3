package fleet

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// faultTimeout is the StoreTimeout of the fault tests: short, with room for
// -race on a busy machine.
const faultTimeout = 150 * time.Millisecond

// faultProcs starts n processes (Stores with a 50ms StoreTimeout) with one
// shared tool breaker each.
func faultProcs(t *testing.T, addr func(i int) string, n int, bs breaker.Settings) ([]*Store, []*ToolBreaker) {
	t.Helper()
	stores := make([]*Store, n)
	tools := make([]*ToolBreaker, n)
	for i := range n {
		s, err := New(Options{Client: newClient(t, addr(i)), Prefix: "f", StoreTimeout: faultTimeout, RetryInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		b, err := s.Tool(bs)
		if err != nil {
			t.Fatal(err)
		}
		stores[i], tools[i] = s, b
	}
	return stores, tools
}

// grants calls Allow k times concurrently on b and returns the permits granted.
func grants(b *ToolBreaker, k int) []Permit {
	var (
		mu sync.Mutex
		ps []Permit
		wg sync.WaitGroup
	)
	for range k {
		wg.Go(func() {
			if p, err := b.Allow(); err == nil {
				mu.Lock()
				ps = append(ps, p)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ps
}

// TestStoreKilledMidOutage: the store is SIGKILLed while the breaker is open
// and restarted empty or with its data. While it is down every process runs
// its local breaker seeded Open (no process wedges) and probes at most once
// per cooldown; once it is back every process re-reads the store's state (the
// store wins): empty, a new epoch whose tokens fence off the old ones; with
// data, the old state, and one probe for the whole fleet.
func TestStoreKilledMidOutage(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprint("keepData=", keep), func(t *testing.T) {
			storeKilledMidOutage(t, func(string) faultTarget { return redistest.Start(t) }, "kill", keep, time.Second)
		})
	}
}

// faultTarget is the store a fault test breaks: a redis-server, or the master
// of a cluster that serves the test's breaker (Addr is then a node that
// stays up).
type faultTarget interface {
	Addr() string
	Kill()
	Save() error
	Restart(keepData bool)
	Stop()
	Cont()
}

// storeKilledMidOutage is TestStoreKilledMidOutage on the target that
// serves the key of the tool breaker name (prefix "f"); back bounds how long
// the processes may take to be shared again after the restart.
func storeKilledMidOutage(t *testing.T, target func(key string) faultTarget, name string, keep bool, back time.Duration) {
	t.Helper()
	srv := target(toolKey("f", name))
	const cooldown = 400 * time.Millisecond
	set := breaker.Settings{Name: name, FailureThreshold: 1, RecoveryDuration: cooldown, ProbeTimeout: 5 * time.Second}
	_, tools := faultProcs(t, func(int) string { return srv.Addr() }, 3, set)
	p, _ := tools[0].Allow()
	p.Failure()
	for i, b := range tools {
		eventuallyTool(t, time.Second, "Open everywhere", b, func() bool { return b.State() == breaker.Open })
		_ = i
	}
	epoch := tools[0].Snapshot().Epoch
	if keep {
		if err := srv.Save(); err != nil {
			t.Fatal(err)
		}
	}
	srv.Kill()
	_, cluster := srv.(clusterTarget)
	for i, b := range tools {
		// A process subscribed through the dead server knows at once; on a
		// cluster, one subscribed through another node learns it from its
		// next round trip (its open mirror refuses without one until then).
		if !cluster {
			eventually(t, time.Second, "local mode", func() bool { return b.Mode() == LocalMode })
		}
		if st := b.State(); st != breaker.Open {
			t.Fatalf("p%d: breaker %v after the store died, want open", i, st)
		}
	}
	for i, b := range tools {
		eventually(t, 2*cooldown, "cooldown passes", b.WouldAllow)
		start := time.Now()
		ps := grants(b, 5)
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Fatalf("p%d: gates took %v with the store down", i, d)
		}
		if len(ps) != 1 || !ps[0].IsProbe() || b.Mode() != LocalMode {
			t.Fatalf("p%d: %d permits while down (mode %v), want one local probe", i, len(ps), b.Mode())
		}
		ps[0].Failure()
		if more := grants(b, 5); len(more) != 0 {
			t.Fatalf("p%d: a second probe in the same cooldown", i)
		}
	}
	srv.Restart(keep)
	for _, b := range tools {
		eventually(t, back+2*time.Second, "shared again", func() bool { return b.Mode() == Shared })
	}
	if !keep {
		for i, b := range tools {
			s := b.Snapshot()
			if s.State != breaker.Closed || s.Epoch == epoch {
				t.Fatalf("p%d after an empty restart: %+v, want closed in a new epoch (old %d)", i, s, epoch)
			}
		}
		// A probe permit of the new epoch and a probe permit of the old one:
		// only the new one counts.
		old := Permit{b: tools[0], gen: epoch + 3, probe: true}
		q, _ := tools[1].Allow()
		q.Failure()
		// The trip reaches p2 by a message; its open state is dated by the
		// store's clock, a hair after q's Failure returned here: wait for
		// the trip, then for the gate, not for a fixed sleep.
		eventuallyTool(t, time.Second, "p2 sees the new epoch's trip", tools[2], func() bool { return tools[2].State() != breaker.Closed })
		var probe Permit
		var err error
		eventually(t, 3*cooldown, "the new epoch's cooldown passes", func() bool {
			probe, err = tools[2].Allow()
			return err == nil
		})
		if !probe.IsProbe() {
			t.Fatalf("new epoch's first probe: %+v, %v", probe, err)
		}
		old.Success()
		eventually(t, time.Second, "p0 sees the probe", func() bool {
			return tools[0].Snapshot().Generation == tools[2].Snapshot().Generation
		})
		if st := tools[0].Snapshot().State; st != breaker.HalfOpen {
			t.Fatalf("an old-epoch token closed the breaker: %v", st)
		}
		probe.Success()
		eventually(t, time.Second, "closed by the real probe", func() bool { return tools[0].State() == breaker.Closed })
		return
	}
	for i, b := range tools {
		if s := b.Snapshot(); s.State != breaker.Open || s.Epoch != epoch {
			t.Fatalf("p%d after a restart with data: %+v, want the stored open state of epoch %d", i, s, epoch)
		}
	}
	var all []Permit
	for _, b := range tools {
		all = append(all, grants(b, 5)...)
	}
	if len(all) != 1 || !all[0].IsProbe() {
		t.Fatalf("%d permits for the fleet once the store is back, want one probe: %+v", len(all), all)
	}
	all[0].Success()
}

// TestStorePaused: a store paused with SIGSTOP for longer than StoreTimeout
// costs one call StoreTimeout, then every call is answered locally at once;
// after SIGCONT the processes go back to the shared state.
func TestStorePaused(t *testing.T) {
	storePaused(t, func(string) faultTarget { return redistest.Start(t) }, "pause")
}

// storePaused is TestStorePaused on the target serving the key of the tool
// breaker name (prefix "f").
func storePaused(t *testing.T, target func(key string) faultTarget, name string) {
	t.Helper()
	srv := target(toolKey("f", name))
	set := breaker.Settings{Name: name, FailureThreshold: 2, RecoveryDuration: time.Second}
	_, tools := faultProcs(t, func(int) string { return srv.Addr() }, 2, set)
	srv.Stop()
	defer srv.Cont()
	start := time.Now()
	p, err := tools[0].Allow() // quiet Closed: no round trip, the pause is not felt
	if err != nil {
		t.Fatal(err)
	}
	p.Failure() // one round trip: times out after StoreTimeout
	if d := time.Since(start); d > faultTimeout+200*time.Millisecond {
		t.Fatalf("a failure with the store paused took %v (StoreTimeout %v)", d, faultTimeout)
	}
	if m := tools[0].Mode(); m != LocalMode {
		t.Fatalf("mode %v after a timeout, want local", m)
	}
	start = time.Now()
	for range 10 {
		p, err := tools[0].Allow()
		if err == nil {
			p.Failure()
		}
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("local calls took %v: wedged on the paused store", d)
	}
	if st := tools[0].State(); st != breaker.Open {
		t.Fatalf("local breaker %v after failures, want open", st)
	}
	srv.Cont()
	for _, b := range tools {
		eventually(t, 5*time.Second, "shared after SIGCONT", func() bool { return b.Mode() == Shared })
	}
	// the store wins: the local failures are dropped; the one that timed out
	// may or may not have reached it (threshold 2: closed either way)
	same := func(a, b ToolSnapshot) bool {
		return a.Epoch == b.Epoch && a.Generation == b.Generation && a.State == b.State && a.ConsecutiveFailures == b.ConsecutiveFailures
	}
	eventually(t, time.Second, "both mirrors agree", func() bool { return same(tools[0].Snapshot(), tools[1].Snapshot()) })
	if s := tools[1].Snapshot(); s.State != breaker.Closed || s.ConsecutiveFailures > 1 {
		t.Fatalf("after the pause: %+v, want the store's closed state", s)
	}
}

// TestStoreLatency: a TCP proxy adds latency between one process and the
// store: below StoreTimeout the process stays shared; above it the process
// goes local within StoreTimeout per call, and comes back when the latency
// drops.
func TestStoreLatency(t *testing.T) {
	srv := redistest.Start(t)
	px := redistest.StartProxy(t, srv.Addr())
	px.SetDelay(2 * time.Millisecond)
	set := breaker.Settings{Name: "slow", FailureThreshold: 3, RecoveryDuration: time.Second}
	_, tools := faultProcs(t, func(i int) string {
		if i == 0 {
			return px.Addr()
		}
		return srv.Addr()
	}, 2, set)
	eventually(t, 2*time.Second, "shared through the proxy", func() bool { return tools[0].Mode() == Shared })
	p, _ := tools[0].Allow()
	p.Failure()
	if m := tools[0].Mode(); m != Shared {
		t.Fatalf("mode %v with 2ms of latency, want shared", m)
	}
	eventually(t, time.Second, "the other process sees the failure", func() bool {
		return tools[1].Snapshot().ConsecutiveFailures == 1
	})
	px.SetDelay(300 * time.Millisecond)
	start := time.Now()
	p, _ = tools[0].Allow()
	p.Failure()
	if d := time.Since(start); d > 2*faultTimeout+200*time.Millisecond {
		t.Fatalf("a failure through a 300ms proxy took %v (StoreTimeout %v)", d, faultTimeout)
	}
	if m := tools[0].Mode(); m != LocalMode {
		t.Fatalf("mode %v with 100ms of latency, want local", m)
	}
	if m := tools[1].Mode(); m != Shared {
		t.Fatalf("the process without latency left shared mode: %v", m)
	}
	px.SetDelay(0)
	eventually(t, 5*time.Second, "shared when the latency drops", func() bool { return tools[0].Mode() == Shared })
}

// TestStorePolicies: FailOpen allows and FailClosed refuses every call while
// the store is down.
func TestStorePolicies(t *testing.T) {
	srv := redistest.Start(t)
	for _, pol := range []Policy{FailOpen, FailClosed} {
		s, err := New(Options{Client: newClient(t, srv.Addr()), Prefix: "pol" + pol.String(), Policy: pol, StoreTimeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		b, err := s.Tool(breaker.Settings{Name: "x", FailureThreshold: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {}()
		s.storeDown()
		if b.Mode() != pol.downMode() || s.Up() {
			t.Fatalf("%v: mode %v, up %v", pol, b.Mode(), s.Up())
		}
		for range 3 {
			p, err := b.Allow()
			if pol == FailOpen && err != nil || pol == FailClosed && !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("%v: Allow = %v", pol, err)
			}
			p.Failure() // dropped
		}
		eventually(t, 2*time.Second, "back to shared", func() bool { return b.Mode() == Shared })
		if st := b.State(); st != breaker.Closed {
			t.Fatalf("%v: verdicts given while down reached the store: %v", pol, st)
		}
	}
}
