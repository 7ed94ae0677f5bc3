package demo

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a clock whose waits advance it at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Wait(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(max(d, 0))
	return nil
}

// fastTiming keeps the real waits of the retry ladder tiny.
var fastTiming = Timing{RetryBase: time.Millisecond, RetryMax: time.Millisecond, RateLimitWait: time.Millisecond}

// fixedRand makes the retry jitter, and so the output, deterministic.
func fixedRand() float64 { return 0.5 }

// fakeConfig is the scripted story on a fake clock.
func fakeConfig(c *fakeClock) Config {
	return Config{Now: c.Now, Wait: c.Wait, Timing: fastTiming, Rand: fixedRand}
}
