package breaker_test

import (
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// A brownout that fails every probe is probed ever less often: with
// RecoveryBackoff 2 the cooldown doubles with each opening, up to
// MaxRecoveryTimeout (SEMANTICS §9.1).
func ExampleSettings_recoveryBackoff() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	b, err := breaker.New(breaker.Settings{
		Name:               "search",
		FailureThreshold:   1,
		RecoveryDuration:   5 * time.Second,
		RecoveryBackoff:    2,
		MaxRecoveryTimeout: 50 * time.Second,
		Now:                func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	p, _ := b.Allow()
	p.Failure() // the trip
	for range 6 {
		s := b.Snapshot()
		fmt.Printf("trip %d: probe after %v (%v)\n", s.Trips, s.OpenUntil.Sub(now), s.Cause)
		now = s.OpenUntil
		p, _ := b.Allow() // the probe
		p.Failure()
	}
	// Output:
	// trip 1: probe after 5s (recovery_timeout)
	// trip 2: probe after 10s (backoff)
	// trip 3: probe after 20s (backoff)
	// trip 4: probe after 40s (backoff)
	// trip 5: probe after 50s (backoff)
	// trip 6: probe after 50s (backoff)
}

// A throttled call with the provider's Retry-After opens the breaker at once
// and for exactly that long: the provider's figure is the precise one, and
// the opening is not counted as a trip (SEMANTICS §9.3.1).
func ExamplePermit_RateLimited() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b, _ := breaker.New(breaker.Settings{Name: "member", Now: func() time.Time { return now }})
	p, _ := b.Allow()
	p.RateLimited(now.Add(time.Second)) // 429, Retry-After: 1
	s := b.Snapshot()
	fmt.Println(s.State, s.OpenUntil.Sub(now), s.Cause, "trips:", s.Trips)
	now = now.Add(time.Second)
	p, err := b.Allow()
	fmt.Println(err == nil, p.IsProbe())
	// Output:
	// open 1s hint trips: 0
	// true true
}

// A quota spent without a reset hint keeps the breaker open for
// QuotaCooldown.
func ExamplePermit_QuotaExhausted() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b, _ := breaker.New(breaker.Settings{QuotaCooldown: 15 * time.Minute, Now: func() time.Time { return now }})
	p, _ := b.Allow()
	p.QuotaExhausted(time.Time{})
	fmt.Println(b.Snapshot().OpenUntil.Sub(now), b.Snapshot().Cause)
	// Output: 15m0s quota
}
