package fallback_test

import (
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// A brownout re-trips the primary each time the manager closes: with
// RecoveryBackoff 2 each repeated trip doubles the cooldown, up to
// MaxRecoveryTimeout (SEMANTICS §9.1). A slow probe then re-opens the
// manager at once (§9.2). A fake clock drives the time.
func ExampleSettings_recoveryBackoff() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := fallback.New(fallback.Settings{
		Primary: "gpt-a", Chain: []string{"gpt-b"},
		RecoveryTimeout: 5 * time.Second, RecoveryBackoff: 2, MaxRecoveryTimeout: 50 * time.Second,
		RecoverySuccessesNeeded: 1, SlowCallAfter: time.Second,
		Now: func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	trip := func() {
		for range 3 {
			t, _ := m.Begin()
			t.Failure(fallback.Transient)
		}
		s := m.Snapshot()
		fmt.Printf("trip %d: cooldown %v (%s)\n", s.Trips, s.CooldownEnds.Sub(s.TrippedAt), s.CooldownCause)
	}
	for range 4 {
		trip()
		now = m.Snapshot().CooldownEnds
		probe, _ := m.Begin()
		probe.SuccessAfter(200 * time.Millisecond) // fast: the manager closes
	}
	trip()
	now = m.Snapshot().CooldownEnds
	probe, _ := m.Begin()
	probe.SuccessAfter(2 * time.Second) // the probe answered, but slowly
	s := m.Snapshot()
	fmt.Printf("slow probe: %s, trip %d, cooldown %v\n", s.State, s.Trips, s.CooldownEnds.Sub(s.TrippedAt))
	// Output:
	// trip 1: cooldown 5s (recovery_timeout)
	// trip 2: cooldown 10s (backoff)
	// trip 3: cooldown 20s (backoff)
	// trip 4: cooldown 40s (backoff)
	// trip 5: cooldown 50s (backoff)
	// slow probe: fallback, trip 6, cooldown 50s
}
