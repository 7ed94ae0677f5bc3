package health

import (
	"context"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestRegistryBackoff: the registry's settings reach every tool's breaker
// with the repeated-trip backoff and the slow probe (SEMANTICS §9.1, §9.2),
// its breakers report the trip count, and its validation names the field.
func TestRegistryBackoff(t *testing.T) {
	clock := &fakeClock{}
	r, err := NewRegistry(breaker.Settings{FailureThreshold: 1, RecoveryDuration: time.Second,
		RecoveryBackoff: 2, MaxRecoveryTimeout: 10 * time.Second, SlowCallAfter: 100 * time.Millisecond, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := r.Allow("search")
	p.Failure()
	for _, wait := range []time.Duration{time.Second, 2 * time.Second} {
		s := r.Breaker("search").Snapshot()
		if got := s.OpenUntil.Sub(clock.Now()); got != wait {
			t.Fatalf("cooldown %v (snapshot %+v), want %v", got, s, wait)
		}
		clock.Advance(wait)
		p, err := r.Allow("search")
		if err != nil || !p.IsProbe() {
			t.Fatalf("Allow = %v, want the probe", err)
		}
		p.Failure()
	}
	clock.Advance(4 * time.Second)
	// a slow probe through Do: served (its answer returned) and the breaker re-opens
	v, err := Do(context.Background(), r, "search", func(context.Context) (int, error) {
		clock.Advance(time.Second)
		return 7, nil
	})
	if v != 7 || err != nil {
		t.Fatalf("Do = %v, %v; want the slow probe's answer", v, err)
	}
	if s := r.Breaker("search").Snapshot(); s.State != breaker.Open || s.Trips != 4 || s.Cause != breaker.CauseBackoff {
		t.Fatalf("snapshot %+v, want open with Trips 4 (backoff)", s)
	}
	if st := r.Stats("search"); st.Successes != 1 {
		t.Fatalf("stats %+v, want the slow probe recorded as a success", st)
	}
	if _, err := NewRegistry(breaker.Settings{RecoveryBackoff: 0.5}); err == nil {
		t.Fatal("NewRegistry accepted RecoveryBackoff 0.5")
	}
}
