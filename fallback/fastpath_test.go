package fallback

import (
	"sync"
	"testing"
	"time"
)

// TestLockFreePathsCountEachTicketOnce hammers the lock-free paths (Begin in
// Primary and in Fallback, successes and cancels outside Recovering) from
// several goroutines, settling every ticket twice through copies, and checks
// that each ticket's verdict counted exactly once.
func TestLockFreePathsCountEachTicketOnce(t *testing.T) {
	const goroutines, turns = 8, 500
	for _, tripped := range []bool{false, true} {
		threshold := 1 << 30
		if tripped {
			threshold = 1
		}
		m, err := New(Settings{
			Primary: "a", Chain: []string{"b"}, TripThreshold: threshold,
			MaxFailCount: 1 << 30, RecoveryTimeout: time.Hour,
		})
		if err != nil {
			t.Fatal(err)
		}
		if tripped {
			tk, _ := m.Begin()
			tk.Failure(Transient)
		}
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range turns {
					tk, err := m.Begin()
					if err != nil {
						t.Error(err)
						return
					}
					cp := tk
					switch (g + i) % 3 {
					case 0:
						tk.Success()
						cp.Success()
					case 1:
						tk.Cancel()
						cp.Failure(Transient) // settled already: ignored
					default:
						tk.Failure(Transient)
						cp.Failure(Transient)
					}
				}
			})
		}
		wg.Wait()
		s := m.Snapshot()
		if !tripped {
			if s.State != Primary || s.ConsecutiveFailures > goroutines*turns/3+1 {
				t.Fatalf("primary: state %v, %d consecutive failures", s.State, s.ConsecutiveFailures)
			}
			continue
		}
		// In Fallback every failure spends entry b once: successes and
		// cancels change nothing.
		want := 0
		for g := range goroutines {
			for i := range turns {
				if (g+i)%3 == 2 {
					want++
				}
			}
		}
		if s.State != Fallback || s.Chain[0].Attempts != want {
			t.Fatalf("fallback: state %v, entry b attempts %d, want %d", s.State, s.Chain[0].Attempts, want)
		}
	}
}
