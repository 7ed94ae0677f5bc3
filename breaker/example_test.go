package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

func Example() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	b, err := breaker.New(breaker.Settings{
		Name:             "search",
		FailureThreshold: 2,
		RecoveryDuration: 30 * time.Second,
		Now:              func() time.Time { return now },
		OnStateChange: func(name string, from, to breaker.State) {
			fmt.Printf("%s: %v -> %v\n", name, from, to)
		},
	})
	if err != nil {
		panic(err)
	}

	// Two consecutive failures trip the breaker.
	for range 2 {
		p, _ := b.Allow()
		p.Failure()
	}

	// While open, calls are refused softly.
	now = now.Add(18 * time.Second)
	_, err = b.Allow()
	fmt.Println(err)
	fmt.Println(errors.Is(err, breaker.ErrOpen), b.WouldAllow())

	// After the cooldown the next caller is the probe; everyone else waits.
	now = now.Add(12 * time.Second)
	probe, _ := b.Allow()
	fmt.Println("probe:", probe.IsProbe())
	_, err = b.Allow()
	fmt.Println(err)

	// The probe's success proves recovery.
	probe.Success()
	fmt.Println(b.State())

	// Output:
	// search: closed -> open
	// tool temporarily unavailable: circuit breaker open for "search"; retry in 12s
	// true false
	// search: open -> half-open
	// probe: true
	// tool temporarily unavailable: circuit breaker open for "search" (a probe is in flight); retry in 30s
	// search: half-open -> closed
	// closed
}

func ExampleDo() {
	b, _ := breaker.New(breaker.Settings{Name: "weather"})
	forecast, err := breaker.Do(context.Background(), b, func(ctx context.Context) (string, error) {
		return "sunny", nil // call the tool with ctx here
	})
	fmt.Println(forecast, err)
	// Output: sunny <nil>
}

// A call that hung since before the tool recovered fails late: a newer call
// has already proved the tool works, so the late failure changes nothing.
func Example_staleFailure() {
	b, _ := breaker.New(breaker.Settings{Name: "search"})
	hung, _ := b.Allow() // started during an outage; it will time out later

	p, _ := b.Allow()
	p.Failure() // the outage
	p, _ = b.Allow()
	p.Success() // a newer call: the tool is back (the count is reset)

	hung.Failure() // old news
	fmt.Println(b.State(), b.Snapshot().ConsecutiveFailures)
	// Output: closed 0
}

func ExampleBreaker_Reset() {
	b, _ := breaker.New(breaker.Settings{
		Name:             "search",
		FailureThreshold: 1,
		OnStateChange: func(name string, from, to breaker.State) {
			fmt.Printf("%s: %v -> %v\n", name, from, to)
		},
	})
	p, _ := b.Allow()
	p.Failure()
	b.Reset() // an operator knows the tool is fixed
	fmt.Println(b.State(), b.WouldAllow())
	// Output:
	// search: closed -> open
	// search: open -> closed
	// closed true
}

// A call that hung until its deadline is reported with Timeout: it is dated
// at the call's start, so a trip caused by calls that hung through an outage
// is dated inside the outage, and the next call after the cooldown counted
// from there is the probe.
func ExamplePermit_Timeout() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	b, _ := breaker.New(breaker.Settings{
		Name:             "search",
		FailureThreshold: 2,
		RecoveryDuration: 30 * time.Second,
		Now:              func() time.Time { return now },
	})
	start := now
	hung := []breaker.Permit{}
	for range 2 {
		p, _ := b.Allow()
		hung = append(hung, p)
	}

	// The calls hang for 45s (the outage ended meanwhile), then time out.
	now = now.Add(45 * time.Second)
	for _, p := range hung {
		p.Timeout() // or p.Done(err) with errors.Is(err, context.DeadlineExceeded)
	}
	s := b.Snapshot()
	fmt.Println(s.State, s.LastFailure.Sub(start))

	// The cooldown counted from the calls' start has passed: probe at once.
	p, err := b.Allow()
	fmt.Println(p.IsProbe(), err)
	p.Success()
	fmt.Println(b.State())
	// Output:
	// open 0s
	// true <nil>
	// closed
}
