package fleet

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

func TestToolTripsFleetWideAndOneProbe(t *testing.T) {
	srv := redistest.Start(t)
	const n = 3
	bs := make([]*ToolBreaker, n)
	for i := range bs {
		s := startStore(t, srv, Options{})
		b, err := s.Tool(breaker.Settings{Name: "search", FailureThreshold: 3, RecoveryDuration: 200 * time.Millisecond, ProbeTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		bs[i] = b
	}
	// three failures, one on each process, trip the fleet's breaker
	for i, b := range bs {
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		p.Failure()
	}
	for i, b := range bs {
		eventually(t, time.Second, "every mirror sees Open", func() bool { return b.State() == breaker.Open })
		if _, err := b.Allow(); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("process %d: Allow while open = %v", i, err)
		}
	}
	time.Sleep(220 * time.Millisecond)
	var (
		mu     sync.Mutex
		probes []Permit
		wg     sync.WaitGroup
	)
	for _, b := range bs {
		for range 5 {
			wg.Go(func() {
				p, err := b.Allow()
				if err == nil {
					mu.Lock()
					probes = append(probes, p)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(probes) != 1 || !probes[0].IsProbe() {
		t.Fatalf("granted %d permits after the cooldown, want exactly one probe: %+v", len(probes), probes)
	}
	probes[0].Success()
	for _, b := range bs {
		eventually(t, time.Second, "every mirror sees Closed", func() bool { return b.State() == breaker.Closed })
	}
}
