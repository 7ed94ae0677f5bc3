package fleet

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestToolBackoffIsFleetState (FLEET rev 4): the trip count n and the
// backed-off cooldown are the store's: probes failed through one process or
// another make the fleet wait 100, 200, 400, 400 ms (f = 2, cap 400 ms, on the
// store's clock), every process reads the same Trips and OpenUntil, and a
// trip MaxRecoveryTimeout after the fleet closed starts again from n = 1.
func TestToolBackoffIsFleetState(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64 // the store's virtual clock, µs
	clock.Store(1_800_000_000_000_000)
	bs := make([]*breaker.Breaker, 2)
	tools := make([]*ToolBreaker, 2)
	for i := range bs {
		s := newFakeStore(t, srv, Options{}, clock.Load)
		st := breaker.Settings{Name: "backoff", FailureThreshold: 1, RecoveryDuration: 100 * time.Millisecond,
			ProbeTimeout: time.Second, RecoveryBackoff: 2, MaxRecoveryTimeout: 400 * time.Millisecond,
			Backend: s.ToolBackend()}
		b, err := breaker.New(st)
		if err != nil {
			t.Fatal(err)
		}
		bs[i] = b
		s.mu.Lock()
		tools[i] = s.members[s.key("tool", "backoff")+":ch"].(*ToolBreaker)
		s.mu.Unlock()
	}
	settle := func(i int, probe bool, verdict func(breaker.Permit)) {
		t.Helper()
		p, err := bs[i].Allow()
		if err != nil || p.IsProbe() != probe {
			t.Fatalf("p%d Allow = %v (probe %v), want a permit (probe %v)", i, err, p.IsProbe(), probe)
		}
		verdict(p)
		v := tools[i].mirror.Load().v
		for _, tb := range tools {
			eventually(t, 2*time.Second, "every mirror reaches the store's version", func() bool { return tb.mirror.Load().v >= v })
		}
	}
	wantOpen := func(n int, wait time.Duration) {
		t.Helper()
		until := time.UnixMicro(clock.Load()).Add(wait)
		for i, b := range bs {
			if s := b.Snapshot(); s.State != breaker.Open || s.Trips != n || !s.OpenUntil.Equal(until) {
				t.Fatalf("p%d snapshot %+v, want open, Trips %d, OpenUntil +%v", i, s, n, wait)
			}
		}
	}
	settle(0, false, breaker.Permit.Failure)
	wantOpen(1, 100*time.Millisecond)
	for n, wait := range []time.Duration{200, 400, 400} {
		clock.Add(int64(bs[0].Snapshot().OpenUntil.Sub(time.UnixMicro(clock.Load())) / time.Microsecond))
		settle(n%2, true, breaker.Permit.Failure)
		wantOpen(n+2, wait*time.Millisecond)
	}
	clock.Add(400_000)
	settle(1, true, breaker.Permit.Success)
	clock.Add(400_000) // MaxRecoveryTimeout closed: the next trip is n = 1 again
	if s := bs[0].Snapshot(); s.State != breaker.Closed || s.Trips != 0 {
		t.Fatalf("snapshot %+v, want closed with Trips read as 0", s)
	}
	settle(0, false, breaker.Permit.Failure)
	wantOpen(1, 100*time.Millisecond)
}

// TestToolBackoffStoreDown (FLEET rev 4): a local breaker seeded from the
// mirror keeps n and the cooldown's end, and a store restarted empty reads
// n = 0 once the process re-joins it.
func TestToolBackoffStoreDown(t *testing.T) {
	srv := redistest.Start(t)
	st := startStore(t, srv, Options{Policy: Local, StoreTimeout: faultTimeout, RetryInterval: 20 * time.Millisecond})
	bs := breaker.Settings{Name: "down", FailureThreshold: 1, RecoveryDuration: time.Hour, RecoveryBackoff: 2,
		MaxRecoveryTimeout: 4 * time.Hour}
	tb, err := st.Tool(bs)
	if err != nil {
		t.Fatal(err)
	}
	bs.Backend = st.ToolBackend() // attaches to tb
	b, err := breaker.New(bs)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := b.Allow()
	p.RateLimited(time.Now().Add(time.Millisecond)) // opens until the hint, n = 0
	time.Sleep(5 * time.Millisecond)                // a real store: its own clock
	p, err = b.Allow()
	if err != nil || !p.IsProbe() {
		t.Fatalf("Allow after the hint = %v (probe %v), want the probe", err, p.IsProbe())
	}
	p.Failure() // a re-trip: n = 1, the base cooldown
	shared := b.Snapshot()
	if shared.Trips != 1 || shared.State != breaker.Open || shared.Cause != breaker.CauseRecoveryTimeout {
		t.Fatalf("shared snapshot %+v, want open, Trips 1, recovery_timeout", shared)
	}
	srv.Kill()
	eventually(t, 2*time.Second, "local mode", func() bool { return tb.Mode() == LocalMode })
	local := b.Snapshot()
	if local.Trips != 1 || local.State != breaker.Open || local.OpenUntil.Sub(shared.OpenUntil).Abs() > 50*time.Millisecond {
		t.Fatalf("local snapshot %+v, want the mirror's n and cooldown end (%v)", local, shared.OpenUntil)
	}
	srv.Restart(false)
	eventually(t, 5*time.Second, "back to Shared", func() bool { return tb.Mode() == Shared })
	if s := b.Snapshot(); s.Trips != 0 || s.State != breaker.Closed {
		t.Fatalf("snapshot after an empty restart %+v, want closed with n = 0", s)
	}
}
