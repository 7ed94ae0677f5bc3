package breaker

import (
	"sync"
	"testing"
	"time"
)

// TestReconfigureConcurrent: Reconfigure may run while other goroutines take
// the gate, settle permits with every verdict and read the breaker (run with
// -race); afterwards the breaker still obeys the last settings.
func TestReconfigureConcurrent(t *testing.T) {
	f := backoffFixture(t, nil)
	settings := func(i int) Settings {
		return Settings{Name: "search", FailureThreshold: 1 + i%3, RecoveryDuration: backoffBase,
			ProbeTimeout: testLease, RecoveryBackoff: float64(i % 3), MaxRecoveryTimeout: backoffCap,
			FailureRate: float64(i%2) / 2, SlowCallAfter: time.Duration(i%2) * time.Second, Now: f.clock.Now}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, _, _ = f.b.WouldAllow(), f.b.Snapshot(), f.b.State()
				p, err := f.b.Allow()
				if err != nil {
					f.clock.Advance(time.Second)
					continue
				}
				switch (g + i) % 5 {
				case 0:
					p.Success()
				case 1:
					p.SuccessAfter(2 * time.Second)
				case 2:
					p.Failure()
				case 3:
					p.RateLimited(f.now().Add(time.Second))
				default:
					p.QuotaExhausted(time.Time{})
				}
			}
		})
	}
	for i := range 200 {
		if err := f.b.Reconfigure(settings(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	f.b.Reset()
	if err := f.b.Reconfigure(settings(0)); err != nil { // threshold 1
		t.Fatal(err)
	}
	f.allow().Failure()
	f.wantOpen(1, f.now().Add(backoffBase), CauseRecoveryTimeout)
}
