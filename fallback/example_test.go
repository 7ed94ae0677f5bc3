package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// A manager trips to its chain, spends it, fails fast with FallbackExhausted,
// then probes the primary after the cooldown and recovers. A fake clock drives
// the time.
func Example() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	m, err := fallback.New(fallback.Settings{
		Primary:      "gpt-a",
		Chain:        []string{"gpt-b", "gpt-c"},
		MaxFailCount: 1, // one strike per backup
		Now:          func() time.Time { return now },
		OnTransition: func(t fallback.Transition) {
			fmt.Printf("  %s -> %s (%q -> %q) at +%v\n", t.From, t.To, t.FromModel, t.ToModel, t.At.Sub(start))
		},
	})
	if err != nil {
		panic(err)
	}
	turn := func(ok bool) {
		t, err := m.Begin()
		if err != nil {
			fmt.Println("begin:", errors.Is(err, fallback.ErrExhausted), err)
			return
		}
		fmt.Printf("turn on %s (probe %v), ok %v\n", t.Model(), t.IsProbe(), ok)
		if ok {
			t.Success()
		} else {
			t.Failure(fallback.Transient)
		}
	}

	for range 3 {
		turn(false) // three failed turns on the primary trip the manager
	}
	now = now.Add(10 * time.Second)
	turn(false) // gpt-b's only strike
	turn(false) // gpt-c's only strike
	turn(true)  // nothing left: fail fast
	now = now.Add(50 * time.Second)
	fmt.Println("state:", m.State(), "next:", m.ActiveModel())
	turn(true) // the cooldown has passed: probe the primary
	turn(true) // the second probe success recovers
	fmt.Println("state:", m.State(), "ever tripped:", m.FallbackActivated())
	// Output:
	// turn on gpt-a (probe false), ok false
	// turn on gpt-a (probe false), ok false
	// turn on gpt-a (probe false), ok false
	//   primary -> fallback ("gpt-a" -> "gpt-b") at +0s
	// turn on gpt-b (probe false), ok false
	//   fallback -> fallback ("gpt-b" -> "gpt-c") at +10s
	// turn on gpt-c (probe false), ok false
	//   fallback -> fallback ("gpt-c" -> "") at +10s
	// begin: true fallback: every model in the fallback chain has failed (FallbackExhausted): chain [gpt-b gpt-c]; primary "gpt-a" may be probed in 50s
	// state: fallback next: gpt-a
	//   fallback -> recovering ("" -> "gpt-a") at +1m0s
	// turn on gpt-a (probe true), ok true
	// turn on gpt-a (probe true), ok true
	//   recovering -> primary ("gpt-a" -> "gpt-a") at +1m0s
	// state: primary ever tripped: true
}

// A manager with no chain trips (bookkeeping and events) but keeps serving the
// primary: it never returns ErrExhausted.
func Example_noChain() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, _ := fallback.New(fallback.Settings{
		Primary:      "gpt-a",
		Now:          func() time.Time { return now },
		OnTransition: func(t fallback.Transition) { fmt.Println(t) },
	})
	for range 4 {
		t, err := m.Begin()
		fmt.Println(t.Model(), err)
		t.Failure(fallback.RateLimit)
	}
	fmt.Println(m.State())
	// Output:
	// gpt-a <nil>
	// gpt-a <nil>
	// gpt-a <nil>
	// primary -> fallback ("gpt-a" -> "gpt-a") at 2026-01-01T00:00:00Z
	// gpt-a <nil>
	// fallback
}

// finish settles a ticket from the outcome of the request: a cancelled context
// carries no verdict, a rate-limit escalation is RateLimit, anything else that
// failed the turn is Transient.
func finish(t fallback.Ticket, err error) {
	switch {
	case err == nil:
		t.Success()
	case errors.Is(err, context.Canceled):
		t.Cancel()
	case errors.Is(err, errRateLimited): // e.g. retry.ErrRateLimitEscalation
		t.Failure(fallback.RateLimit)
	default:
		t.Failure(fallback.Transient)
	}
}

var errRateLimited = errors.New("rate limited")

func ExampleTicket() {
	m, _ := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}})
	for _, err := range []error{
		errors.New("502 bad gateway"), context.Canceled, errRateLimited, nil, errRateLimited,
		errRateLimited, errRateLimited,
	} {
		t, berr := m.Begin()
		if berr != nil {
			fmt.Println(berr) // ErrExhausted: a hard error, end the run
			return
		}
		finish(t, err)
		fmt.Printf("%s: %v -> %s, %d failures\n", t.Model(), err, m.State(), m.Snapshot().ConsecutiveFailures)
	}
	// Output:
	// gpt-a: 502 bad gateway -> primary, 1 failures
	// gpt-a: context canceled -> primary, 1 failures
	// gpt-a: rate limited -> primary, 2 failures
	// gpt-a: <nil> -> primary, 0 failures
	// gpt-a: rate limited -> primary, 1 failures
	// gpt-a: rate limited -> primary, 2 failures
	// gpt-a: rate limited -> fallback, 0 failures
}

// A gateway request is one turn: its attempts share an Attempts. The probe
// of a hanging primary times out; the same turn is then served by the chain,
// and never draws the probe slot again.
func ExampleManager_Next() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, _ := fallback.New(fallback.Settings{
		Primary: "gpt-a", Chain: []string{"gpt-b"}, TripThreshold: 1,
		Now: func() time.Time { return now },
	})
	t, _ := m.Begin()
	t.Failure(fallback.Transient) // trips
	now = now.Add(time.Minute)    // the cooldown has passed

	var turn fallback.Attempts
	for {
		t, err := m.Next(&turn)
		if err != nil {
			fmt.Println("turn ends:", err)
			return
		}
		fmt.Printf("attempt on %s (probe %v)\n", t.Model(), t.IsProbe())
		if t.IsProbe() {
			t.Fail(fallback.Failure{Timeout: true}) // no answer before the deadline
			fmt.Println("another model usable:", turn.Usable(m))
			continue
		}
		t.Success()
		fmt.Println("served by", t.Model())
		return
	}
	// Output:
	// attempt on gpt-a (probe true)
	// another model usable: true
	// attempt on gpt-b (probe false)
	// served by gpt-b
}

// Fail reports a failure with its kind, hint and timeout: a quota answer
// trips the primary at once and holds it open until the provider's hint. A
// timeout reports how long its call ran (Elapsed), and is dated at its start.
func ExampleTicket_Fail() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, _ := fallback.New(fallback.Settings{
		Primary: "gpt-a", Chain: []string{"gpt-b"},
		Now: func() time.Time { return now },
	})
	t, _ := m.Begin()
	t.Fail(fallback.Failure{Kind: fallback.Quota, Hint: now.Add(time.Hour)})
	s := m.Snapshot()
	fmt.Println(s.State, s.CooldownEnds.Sub(now), s.CooldownCause)

	m.Reset()
	t, _ = m.Begin()
	now = now.Add(2 * time.Minute) // a call that hung for two minutes
	// It reports how long it ran: the timeout is dated at its start.
	t.Fail(fallback.Failure{Kind: fallback.Quota, Timeout: true, Elapsed: 2 * time.Minute})
	s = m.Snapshot()
	fmt.Println(s.State, "tripped", now.Sub(s.TrippedAt), "ago; cooldown", s.CooldownEnds.Sub(s.TrippedAt), s.CooldownCause)
	// Output:
	// fallback 1h0m0s quota
	// fallback tripped 2m0s ago; cooldown 10m0s quota
}

// The turn of the library guide (docs/library.md): begin, bound a probe by
// its lease, send, settle.
func ExampleManager_Begin() {
	send := func(ctx context.Context, model string) error { // one model request
		fmt.Println("sent to", model)
		return nil
	}
	run := func(ctx context.Context) error {
		m, err := fallback.New(fallback.Settings{
			Primary:      "claude-sonnet",
			Chain:        []string{"gpt-5-mini", "llama-local"},
			OnTransition: func(t fallback.Transition) { fmt.Println("model breaker:", t) },
		})
		if err != nil {
			return err
		}
		tk, err := m.Begin() // cooldown check + routing, atomically
		if errors.Is(err, fallback.ErrExhausted) {
			return err // hard error: every backup failed and the cooldown is still running
		}
		if end, ok := tk.Deadline(); ok { // a probe ticket: bounded by its lease
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, end)
			defer cancel()
		}
		if err := send(ctx, tk.Model()); err != nil {
			tk.Fail(fallback.Failure{Kind: fallback.Transient}) // or fallback.RateLimit after a 429 escalation
			return err
		}
		tk.Success()
		fmt.Println(m.State(), m.ActiveModel())
		return nil
	}
	if err := run(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// sent to claude-sonnet
	// primary claude-sonnet
}
