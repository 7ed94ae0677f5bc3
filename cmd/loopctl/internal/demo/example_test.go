package demo_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/cmd/loopctl/internal/demo"
)

// The scripted story on a fake clock: its waits advance the clock at once, so
// the cooldowns pass without sleeping.
func ExampleRun() {
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	wait := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(d)
		return ctx.Err()
	}
	sum, err := demo.Run(context.Background(), demo.Config{
		Now:  now,
		Wait: wait,
		// Tiny real waits for the retry ladder.
		Timing: demo.Timing{RetryBase: time.Millisecond, RetryMax: time.Millisecond, RateLimitWait: time.Millisecond},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range sum.Transitions {
		fmt.Printf("%5.1fs  %s\n", t.Elapsed.Seconds(), t)
	}
	// Output:
	//   3.0s  model breaker  primary -> fallback  (gpt-primary -> gpt-backup-1)
	//   3.0s  model breaker  fallback -> fallback  (gpt-backup-1 -> gpt-backup-2)
	//   4.5s  tool breaker  search  closed -> open
	//   9.0s  model breaker  fallback -> recovering  (gpt-backup-2 -> gpt-primary)
	//   9.0s  tool breaker  search  open -> half-open
	//   9.0s  tool breaker  search  half-open -> open
	//   9.0s  model breaker  recovering -> primary  (gpt-primary -> gpt-primary)
	//  12.0s  tool breaker  search  open -> half-open
	//  12.0s  tool breaker  search  half-open -> closed
	//  13.5s  tool breaker  search  closed -> open
	//  13.5s  tool breaker  search_backup  closed -> open
	//  16.5s  tool breaker  search  open -> half-open
	//  16.5s  tool breaker  search  half-open -> closed
}
