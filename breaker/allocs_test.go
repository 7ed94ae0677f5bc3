package breaker

import (
	"context"
	"testing"
	"time"
)

// TestHotPathsDoNotAllocate checks the allocation goals (their speed is
// measured by the benchmarks).
func TestHotPathsDoNotAllocate(t *testing.T) {
	closed, _ := New(Settings{})
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	open, _ := New(Settings{FailureThreshold: 1, Now: func() time.Time { return fixed }})
	p, _ := open.Allow()
	p.Failure()
	ctx := context.Background()
	deadline, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	windowed, _ := New(Settings{FailureRate: 0.5, SlowCallAfter: time.Second, SlowCallRate: 0.5})
	backoff, _ := New(Settings{RecoveryBackoff: 2, SlowCallAfter: time.Second})
	ok := func(context.Context) (int, error) { return 1, nil }
	for name, fn := range map[string]func(){
		"closed Allow+Success":        func() { p, _ := closed.Allow(); p.Success() },
		"closed Do with a deadline":   func() { _, _ = Do(deadline, closed, ok) },
		"windowed Allow+SuccessAfter": func() { p, _ := windowed.Allow(); p.SuccessAfter(time.Millisecond) },
		"windowed Do":                 func() { _, _ = Do(ctx, windowed, ok) },
		"closed Do":                   func() { _, _ = Do(ctx, closed, ok) },
		"backoff Allow+Success":       func() { p, _ := backoff.Allow(); p.Success() },
		"backoff Do":                  func() { _, _ = Do(ctx, backoff, ok) },
		"open Do":                     func() { _, _ = Do(ctx, open, ok) },
		"open refusal":                func() { _, _ = open.Allow() },
		"WouldAllow":                  func() { _ = open.WouldAllow() },
		"State":                       func() { _ = open.State() },
	} {
		if n := testing.AllocsPerRun(1000, fn); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}
