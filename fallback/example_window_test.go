package fallback_test

import (
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// A primary that fails one call in three, never two in a row, never reaches
// the consecutive threshold; the failure-rate window trips it (SEMANTICS §8.1).
func ExampleSettings_failureRate() {
	m, _ := fallback.New(fallback.Settings{
		Primary: "gpt-a", Chain: []string{"gpt-b"},
		FailureRate: 0.3, RateWindow: 10 * time.Second, RateMinCalls: 9,
	})
	for i := 1; i <= 9; i++ {
		t, _ := m.Begin()
		if i%3 == 0 {
			t.Failure(fallback.Transient)
		} else {
			t.SuccessAfter(200 * time.Millisecond) // the time to first content
		}
	}
	fmt.Println(m.State(), m.ActiveModel())
	// Output:
	// fallback gpt-b
}

// A retry ladder asks the budget of the ticket's model before each
// same-model retry (SEMANTICS §8.3); with retry.Do, set Policy.Budget to
// ticket.Retry.
func ExampleTicket_Retry() {
	m, _ := fallback.New(fallback.Settings{Primary: "gpt-a", RetryBudget: 0.5, RetryBudgetBurst: 2})
	t, _ := m.Begin()
	retries := 0
	for t.Retry() { // a primary that keeps failing
		retries++
	}
	t.Failure(fallback.Transient)
	fmt.Println("retries from a full budget:", retries)
	for range 2 { // two turns refill one token
		t, _ = m.Begin()
		t.Success()
	}
	fmt.Println("after two turns:", m.Retry("gpt-a"), m.Retry("gpt-a"))
	// Output:
	// retries from a full budget: 2
	// after two turns: true false
}
