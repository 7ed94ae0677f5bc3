package fleet_test

import (
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestGuideOperate runs the fleet guide's Operate snippet (docs/fleet.md)
// against a real redis-server: a second process's Manager, on its own
// Store, reports the hold and the reset as the operator's acts, the reset
// with the reason Operate gave it.
func TestGuideOperate(t *testing.T) {
	srv := redistest.Start(t)
	dial := func() *fleet.Store {
		s, err := fleet.Dial("redis://"+srv.Addr(), fleet.Options{Prefix: "myapp"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	var (
		mu   sync.Mutex
		seen []fallback.Transition
	)
	if _, err := fallback.New(fallback.Settings{Primary: "up/a", Chain: []string{"up/b"}, Backend: dial().ModelBackend("smart"),
		OnTransition: func(tr fallback.Transition) { mu.Lock(); seen = append(seen, tr); mu.Unlock() }}); err != nil {
		t.Fatal(err) // the other process's Manager, attached to the shared breaker
	}
	store := dial()

	b := store.ModelBackend("smart")
	m, _ := fallback.New(fallback.Settings{Primary: "up/a", Chain: []string{"up/b"}, Backend: b})
	m.Hold(time.Now().Add(10*time.Minute), "INC-42 (by oncall)") // every replica: Manual "hold", this Reason and end
	_ = b.(interface {
		Operate(action, entry, reason string, until time.Time) error
	}).Operate("reset", "", " (by oncall)", time.Time{}) // every replica: Manual "reset", this Reason

	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the other process reported %d transitions after 5s, want the hold and the reset", n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if h, r := seen[0], seen[1]; h.Manual != "hold" || h.Reason != "INC-42 (by oncall)" || h.Until.IsZero() ||
		r.Manual != "reset" || r.Reason != " (by oncall)" || r.To != fallback.Primary {
		t.Errorf("the other process reported %v; %v", h, r)
	}
}
