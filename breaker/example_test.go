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
