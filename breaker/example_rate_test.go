package breaker_test

import (
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// A tool that fails every third call never fails three in a row, so the
// consecutive rule alone never trips; the failure-rate window does, at the
// 12th call (4 failures of 12 verdicts, at least RateMinCalls).
func ExampleSettings_failureRate() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	b, err := breaker.New(breaker.Settings{
		Name:         "search",
		FailureRate:  0.3,
		RateWindow:   10 * time.Second,
		RateMinCalls: 10,
		Now:          func() time.Time { return now },
		OnStateChange: func(name string, from, to breaker.State) {
			fmt.Printf("%s: %v -> %v\n", name, from, to)
		},
	})
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 14; i++ {
		p, err := b.Allow()
		if err != nil {
			fmt.Println("call", i, "refused")
			continue
		}
		if i%3 == 0 {
			p.Failure()
		} else {
			p.Success()
		}
		now = now.Add(100 * time.Millisecond)
	}
	// Output:
	// search: closed -> open
	// call 13 refused
	// call 14 refused
}

// A caller that times its own calls reports a timeout with how long the call
// ran: the failure is dated at the call's start, and the gate never reads the
// clock in Closed.
func ExamplePermit_TimeoutAfter() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b, _ := breaker.New(breaker.Settings{Now: func() time.Time { return now }})
	p, _ := b.Allow()
	now = now.Add(20 * time.Second) // the call hung until its deadline
	p.TimeoutAfter(20 * time.Second)
	fmt.Println(b.Snapshot().LastFailure.Format(time.TimeOnly))
	// Output: 12:00:00
}

// A call whose first content came later than SlowCallAfter is a slow success:
// a success for every rule, and a slow call in the window.
func ExamplePermit_SuccessAfter() {
	b, _ := breaker.New(breaker.Settings{SlowCallAfter: time.Second, SlowCallRate: 0.5, RateMinCalls: 4})
	for _, ttfc := range []time.Duration{200 * time.Millisecond, 2 * time.Second, 3 * time.Second, 2 * time.Second} {
		p, _ := b.Allow()
		p.SuccessAfter(ttfc)
	}
	fmt.Println(b.State())
	// Output: open
}
